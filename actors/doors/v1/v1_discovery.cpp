#include "actors/doors/v1/v1_discovery.hpp"

#include "net/access_policy.hpp"
#include "registry/runtime_info.hpp"

#include <spdlog/spdlog.h>

#include <csignal>
#include <set>

namespace actor_host {

namespace fs = std::filesystem;

std::string v1_url_problem(const std::string& url, const std::vector<std::uint16_t>& own_ports) {
  if (!url.starts_with("http://"))
    return "is not an http:// URL";
  if (!net::is_loopback_origin(url))
    return "is not on a loopback host (localhost, 127.0.0.0/8, [::1]) with no path";
  // A loopback origin: "http://host[:port]", the host maybe "[::1]".
  std::uint16_t port = 80;
  auto colon = url.rfind(':');
  if (colon > std::string_view{"http:"}.size() && url.find(']', colon) == std::string::npos)
    port = static_cast<std::uint16_t>(std::stoul(url.substr(colon + 1)));
  for (auto own : own_ports)
    if (own == port)
      return "is this manager's own listener (port " + std::to_string(port)
             + "): a runtime file must point at a runtime";
  return {};
}

namespace {

using self_ptr = caf::stateful_actor<v1_discovery_state>*;

bool process_gone(std::int64_t pid) {
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

void close_live(v1_discovery_state::tracked& t) {
  if (t.live.link)
    t.live.link->close(1001, "its runtime file was removed");
  t.live = {};
}

// A file seen for the first time, or changed since its last try.
void try_file(self_ptr self, const fs::path& path, fs::file_time_type mtime) {
  auto& st = self->state;
  auto name = path.filename().string();
  auto& t = st.files[name];
  close_live(t);
  t.mtime = mtime;
  registry::runtime_file f;
  std::string why;
  if (!registry::read_runtime_file(path.string(), f, why)) {
    spdlog::warn("runtime file {}: {}; ignored until it changes", name, why);
    return;
  }
  // The id and URL reach logs and listings: checked before either.
  if (auto p = registry::peer_text_problem(f.id, registry::max_peer_text_bytes); !p.empty()) {
    spdlog::warn("runtime file {}: its id {}; ignored until it changes", name, p);
    return;
  }
  if (auto p = v1_url_problem(f.reflection_server_url, st.opts.own_ports); !p.empty()) {
    spdlog::warn("runtime file {} (runtime {}): reflectionServerUrl {}; ignored until it changes",
                 name, f.id, p);
    return;
  }
  t.id = f.id;
  t.pid = f.pid;
  spdlog::info("Reflection V1 runtime {} announced at {} (file {})", f.id,
               f.reflection_server_url, name);
  t.live = st.opts.connect(f);
  if (t.live.conn)
    self->monitor(t.live.conn);
}

void scan(self_ptr self) {
  auto& st = self->state;
  std::error_code ec;
  std::set<std::string> present;
  fs::directory_iterator it{st.opts.runtimes_dir, ec};
  std::size_t looked = 0;
  bool complete = true; // every file was seen: the missing ones are gone
  for (; !ec && it != fs::directory_iterator{}; it.increment(ec)) {
    auto& entry = *it;
    // A symlink could name any file of the machine: only regular files.
    std::error_code sec;
    if (!entry.is_regular_file(sec) || entry.is_symlink(sec)
        || entry.path().extension() != ".json")
      continue;
    if (++looked > st.opts.max_files) {
      if (!std::exchange(st.over_cap_logged, true))
        spdlog::warn("{} holds more than {} runtime files; the rest are not looked at",
                     st.opts.runtimes_dir, st.opts.max_files);
      complete = false;
      break;
    }
    auto name = entry.path().filename().string();
    // Names reach log lines: one with control characters is not looked at
    // (and cannot be named in a warning either).
    if (!registry::peer_text_problem(name, registry::max_peer_text_bytes).empty())
      continue;
    present.insert(name);
    auto mtime = entry.last_write_time(sec);
    auto i = st.files.find(name);
    if (i == st.files.end() || (!i->second.live.conn && i->second.mtime != mtime))
      try_file(self, entry.path(), mtime);
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return; // unreadable for now: keep what is connected
  for (auto i = st.files.begin(); complete && i != st.files.end();) {
    if (present.count(i->first)) {
      ++i;
      continue;
    }
    if (i->second.live.conn)
      spdlog::info("Reflection V1 runtime {}: its file {} was removed", i->second.id, i->first);
    close_live(i->second);
    i = st.files.erase(i);
  }
}

} // namespace

caf::behavior v1_discovery(self_ptr self, v1_discovery_options opts) {
  self->state.opts = std::move(opts);
  self->set_down_handler([self](caf::down_msg& dm) {
    for (auto& [name, t] : self->state.files) {
      if (t.live.conn.address() != dm.source)
        continue;
      t.live = {};
      // Genkit's CLI deletes the file of a runtime that failed its health
      // check; here only when its process is gone (a live one may recover
      // and is tried again when it writes its file anew).
      if (process_gone(t.pid)) {
        std::error_code ec;
        fs::remove(fs::path{self->state.opts.runtimes_dir} / name, ec);
        spdlog::info("Reflection V1 runtime {} is gone (pid {}); removed its file {}", t.id,
                     t.pid, name);
      }
    }
  });
  if (self->state.opts.scan_interval.count() > 0)
    self->send(self, scan_atom_v);
  return {
    [self](scan_atom) {
      scan(self);
      if (auto every = self->state.opts.scan_interval; every.count() > 0)
        self->delayed_send(self, every, scan_atom_v);
    },
  };
}

} // namespace actor_host
