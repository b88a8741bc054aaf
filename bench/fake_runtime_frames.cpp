#include "bench/fake_runtime_frames.hpp"

#include "bench/wsraw.hpp"
#include "net/json_raw.hpp"

#include <simdjson.h>

namespace bench {

namespace od = simdjson::ondemand;

bool parse_runtime_inbound(std::string_view frame, runtime_inbound& m) {
  thread_local od::parser parser;
  od::document doc;
  if (parser.iterate(frame.data(), frame.size(), frame.size() + bench::read_padding).get(doc))
    return false;
  od::object obj;
  if (doc.get_object().get(obj))
    return false;
  for (auto field : obj) {
    std::string_view k;
    if (field.unescaped_key().get(k))
      return false;
    od::value v;
    if (field.value().get(v))
      return false;
    if (k == "method") {
      if (v.get_string().get(m.method))
        return false;
    } else if (k == "id") {
      m.id = actor_host::net::json_raw::trim(v.raw_json_token());
    } else if (k == "result" || k == "error") {
      m.has_result = true;
    } else if (k == "params") {
      od::object p;
      if (v.get_object().get(p))
        continue;
      for (auto pf : p) {
        std::string_view pk;
        if (pf.unescaped_key().get(pk))
          return false;
        od::value pv;
        if (pf.value().get(pv))
          return false;
        if (pk == "key") {
          if (pv.get_string().get(m.key))
            return false;
        } else if (pk == "input") {
          if (actor_host::net::json_raw::raw_of(pv, m.input))
            return false;
        } else if (pk == "traceId") {
          if (pv.get_string().get(m.trace_id))
            return false;
        } else if (pk == "requestId") {
          m.request_id = actor_host::net::json_raw::trim(pv.raw_json_token());
        } else if (pk == "chunk") {
          if (actor_host::net::json_raw::raw_of(pv, m.chunk))
            return false;
        } else if (pk == "stream") {
          bool b = false;
          if (!pv.get_bool().get(b))
            m.stream = b;
        }
      }
    }
  }
  return true;
}

} // namespace bench
