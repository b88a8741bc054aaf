#include "bench/fake_runtime_frames.hpp"

#include "bench/frame_scan.hpp"
#include "bench/wsraw.hpp"
#include "wire/json_raw.hpp"

namespace bench {

namespace json_raw = actor_host::wire::json_raw;

bool parse_runtime_inbound(std::string_view frame, runtime_inbound& m) {
  auto on_param = [&m](std::string_view k, od::value& v) {
    if (k == "key")
      return !v.get_string().get(m.key);
    if (k == "input")
      return !json_raw::raw_of(v, m.input);
    if (k == "traceId")
      return !v.get_string().get(m.trace_id);
    if (k == "requestId")
      m.request_id = json_raw::trim(v.raw_json_token());
    else if (k == "chunk")
      return !json_raw::raw_of(v, m.chunk);
    else if (k == "stream") {
      bool b = false;
      if (!v.get_bool().get(b)) // not a bool: left as it was
        m.stream = b;
    }
    return true;
  };
  return scan_frame(frame.data(), frame.size(), frame.size() + read_padding,
                    [&](std::string_view k, od::value& v) {
                      if (k == "method")
                        return !v.get_string().get(m.method);
                      if (k == "id")
                        m.id = json_raw::trim(v.raw_json_token());
                      else if (k == "result" || k == "error")
                        m.has_result = true;
                      else if (k == "params")
                        return for_each_member_if_object(v, on_param);
                      return true;
                    });
}

} // namespace bench
