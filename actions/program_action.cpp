#include "actions/program_action.hpp"

#include "actions/program_run.hpp"
#include "actions/slot_pool.hpp"

#include <boost/json.hpp>

#include <memory>
#include <utility>

namespace actor_host::actions {

action_descriptor make_program_action(program_spec spec) {
  action_descriptor d;
  d.type = spec.type.empty() ? "flow" : spec.type;
  d.name = spec.name;
  d.description = spec.description;
  d.input_schema = spec.input_schema;
  d.output_schema = spec.output_schema;
  d.stream_schema = spec.stream_schema;
  d.init_schema = spec.init_schema;
  d.metadata = spec.metadata;
  if (spec.bidi) {
    // Mark it the way Genkit marks its bidi actions, so clients can tell.
    boost::json::error_code ec;
    auto md = d.metadata.empty() ? boost::json::value(boost::json::object{})
                                 : boost::json::parse(d.metadata, ec);
    if (!ec && md.is_object() && !md.as_object().contains("bidi")) {
      md.as_object()["bidi"] = true;
      d.metadata = boost::json::serialize(md);
    }
  }
  // Shared by every copy of the handler, so the limit is per action.
  std::shared_ptr<slot_pool> slots;
  if (spec.max_concurrency > 0)
    slots = std::make_shared<slot_pool>(spec.max_concurrency);
  auto shared_spec = std::make_shared<const program_spec>(std::move(spec));
  d.handler = [spec = std::move(shared_spec), slots](action_context& ctx) -> boost::json::value {
    ctx.throw_if_cancelled();
    run_deadline deadline;
    if (spec->timeout.count() > 0)
      deadline = std::chrono::steady_clock::now() + spec->timeout;
    slot_lease lease;
    if (slots) {
      lease = slots->acquire(ctx.cancel(), deadline);
      if (!lease) {
        ctx.throw_if_cancelled();
        throw timed_out_error(*spec);
      }
    }
    program_run run{*spec, ctx, deadline};
    return run.run();
  };
  return d;
}

} // namespace actor_host::actions
