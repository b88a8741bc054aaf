#include "obs/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>

namespace actor_host::obs {

namespace {

thread_local log_fields current{};

void append(spdlog::memory_buf_t& dest, std::string_view s) {
  dest.append(s.data(), s.data() + s.size());
}

void append_json_string(spdlog::memory_buf_t& dest, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  dest.push_back('"');
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': append(dest, "\\\""); break;
      case '\\': append(dest, "\\\\"); break;
      case '\n': append(dest, "\\n"); break;
      case '\r': append(dest, "\\r"); break;
      case '\t': append(dest, "\\t"); break;
      default:
        if (u < 0x20) {
          char esc[] = {'\\', 'u', '0', '0', hex[u >> 4], hex[u & 15]};
          dest.append(esc, esc + 6);
        } else {
          dest.push_back(c);
        }
    }
  }
  dest.push_back('"');
}

/// Appends `s` with control characters written as escapes, so that text a peer
/// chose (a runtime id with a newline or an ANSI sequence) cannot end the line
/// or forge one, nor drive the terminal.
void append_escaped(spdlog::memory_buf_t& dest, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      dest.push_back(c);
      continue;
    }
    switch (c) {
      case '\n': append(dest, "\\n"); break;
      case '\r': append(dest, "\\r"); break;
      case '\t': append(dest, "\\t"); break;
      default: {
        char esc[] = {'\\', 'x', hex[u >> 4], hex[u & 15]};
        dest.append(esc, esc + 4);
      }
    }
  }
}

/// `%V` in the text pattern: the message, escaped.
class escaped_message_flag : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    append_escaped(dest, std::string_view{msg.payload.data(), msg.payload.size()});
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<escaped_message_flag>();
  }
};

/// `%*` in the text pattern: the call fields as ` key=value`.
class fields_flag : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    auto& f = current;
    auto add = [&](std::string_view key, std::string_view v) {
      if (v.empty())
        return;
      dest.push_back(' ');
      append(dest, key);
      dest.push_back('=');
      append_escaped(dest, v);
    };
    add("service", f.service);
    add("runtime", f.runtime_id);
    add("action", f.action);
    add("trace", f.trace_id);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<fields_flag>();
  }
};

/// One JSON object per line: ts, level, msg, and the call fields.
class json_formatter : public spdlog::formatter {
public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    auto t = system_clock::to_time_t(msg.time);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char ts[80];
    auto ms = duration_cast<milliseconds>(msg.time.time_since_epoch()).count() % 1000;
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms));
    append(dest, R"({"ts":")");
    append(dest, ts);
    append(dest, R"(","level":")");
    auto lv = spdlog::level::to_string_view(msg.level);
    append(dest, std::string_view{lv.data(), lv.size()});
    append(dest, R"(","msg":)");
    append_json_string(dest, std::string_view{msg.payload.data(), msg.payload.size()});
    auto& f = current;
    auto add = [&](std::string_view key, std::string_view v) {
      if (v.empty())
        return;
      append(dest, ",\"");
      append(dest, key);
      append(dest, "\":");
      append_json_string(dest, v);
    };
    add("service", f.service);
    add("runtimeId", f.runtime_id);
    add("action", f.action);
    add("traceId", f.trace_id);
    append(dest, "}\n");
  }
  std::unique_ptr<formatter> clone() const override {
    return std::make_unique<json_formatter>();
  }
};

} // namespace

scoped_log_fields::scoped_log_fields(log_fields f) : saved_(current) {
  if (f.trace_id.empty())
    f.trace_id = saved_.trace_id;
  if (f.runtime_id.empty())
    f.runtime_id = saved_.runtime_id;
  if (f.action.empty())
    f.action = saved_.action;
  if (f.service.empty())
    f.service = saved_.service;
  current = f;
}

scoped_log_fields::~scoped_log_fields() {
  current = saved_;
}

const log_fields& current_log_fields() {
  return current;
}

std::string setup_logging(std::string_view format, std::string_view level) {
  auto lv = spdlog::level::from_str(std::string{level});
  if (lv == spdlog::level::off && level != "off")
    return "unknown log level '" + std::string{level} + "'";
  auto logger = spdlog::get("actor-host");
  if (!logger)
    logger = spdlog::stderr_color_mt("actor-host");
  if (format == "json") {
    logger->set_formatter(std::make_unique<json_formatter>());
  } else if (format == "text") {
    auto f = std::make_unique<spdlog::pattern_formatter>();
    f->add_flag<fields_flag>('*');
    f->add_flag<escaped_message_flag>('V').set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %V%*");
    logger->set_formatter(std::move(f));
  } else {
    return "unknown log format '" + std::string{format} + "' (text or json)";
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(lv);
  spdlog::flush_on(spdlog::level::info);
  return {};
}

} // namespace actor_host::obs
