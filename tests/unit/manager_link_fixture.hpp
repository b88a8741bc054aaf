#pragma once

// What the manager_link suites share: a catalog of test actions and a link
// to a fake manager socket (manager_link_test.cpp, manager_link_runs_test.cpp).

#include "gate.hpp"
#include "test_support.hpp"

#include "actions/cancel_flag.hpp"
#include "actions/input_queue.hpp"
#include "actors/runtime/bidi_session.hpp"
#include "actors/runtime/manager_link.hpp"
#include "net/access_policy.hpp"

#include <condition_variable>
#include <mutex>

namespace actor_host::testing {

inline actions::catalog_ptr make_catalog(const gate_ptr& g) {
  auto cat = std::make_shared<actions::action_catalog>();
  actions::action_descriptor echo;
  echo.type = "flow";
  echo.name = "echo";
  echo.description = "returns its input";
  echo.handler = [](actions::action_context& ctx) { return ctx.input(); };
  cat->add(std::move(echo));
  actions::action_descriptor collect;
  collect.type = "flow";
  collect.name = "collect";
  collect.handler = collect_inputs_after(g);
  cat->add(std::move(collect));
  // Returns its input: the test picks whether the output fits the schema.
  actions::action_descriptor shaped;
  shaped.type = "flow";
  shaped.name = "shaped";
  shaped.output_schema
    = R"({"type":"object","properties":{"total":{"type":"number"}},"required":["total"]})";
  shaped.handler = [](actions::action_context& ctx) { return ctx.input(); };
  cat->add(std::move(shaped));
  return cat;
}

struct link_fixture : actor_fixture {
  gate_ptr handlers = std::make_shared<gate>();
  actions::catalog_ptr catalog = make_catalog(handlers);
  std::shared_ptr<std::vector<caf::actor>> dials = std::make_shared<std::vector<caf::actor>>();
  std::shared_ptr<std::vector<std::string>> dialed_managers
    = std::make_shared<std::vector<std::string>>();
  std::int64_t links_at_start = live(actor_kind::manager_link);
  std::int64_t actions_at_start = live(actor_kind::active_action);
  std::int64_t bidis_at_start = live(actor_kind::bidi_session);
  caf::actor link;

  link_fixture() {
    link_options opts;
    opts.runtime_id = "rt-test";
    opts.name = "test runtime";
    opts.pid = 4242;
    opts.manager_urls = {"ws://localhost:4100"};
    auto d = dials;
    auto m = dialed_managers;
    link = sys.spawn(manager_link, std::move(opts), catalog,
                     [d, m](const caf::actor& l, const std::string& url) {
                       d->push_back(l);
                       m->push_back(url);
                     });
    sched.run();
  }

  ~link_fixture() {
    handlers->open();
    sys.await_detached_threads();
    if (link) {
      caf::anon_send_exit(link, caf::exit_reason::kill);
      sched.run();
    }
  }

  /// Opens the handlers' gate and waits until every detached handler thread
  /// is gone (its result message is queued by then), then runs the messages.
  void finish_handlers() {
    handlers->open();
    sys.await_detached_threads();
    sched.run();
  }

  fake_transport_ptr connect() {
    auto t = make_fake_transport("127.0.0.1:4100");
    caf::anon_send(link, connected_atom_v, net::transport_ptr{t});
    sched.run();
    return t;
  }

  void fail(std::string reason = "refused") {
    caf::anon_send(link, connect_failed_atom_v, std::move(reason));
    sched.run();
  }

  void closed(std::string reason = "gone") {
    caf::anon_send(link, closed_atom_v, std::move(reason));
    sched.run();
  }

  void post(std::string text) {
    caf::anon_send(link, frame_atom_v, std::move(text));
  }

  void tick(caf::timespan d) {
    advance_time(d);
    sched.run();
  }

  /// Connects and forgets the register frame.
  fake_transport_ptr connect_registered() {
    auto t = connect();
    CAF_REQUIRE_EQUAL(t->size(), 1u);
    t->clear();
    return t;
  }

  manager_link_state& link_state() {
    return deref<caf::stateful_actor<manager_link_state>>(link).state;
  }

  /// The frame answering raw id `id`, or "<no reply>".
  static std::string reply_to(const fake_transport_ptr& t, const std::string& id) {
    for (auto& f : t->frames()) {
      auto v = parse_json(f);
      auto* obj = v.if_object();
      if (obj && obj->if_contains("id") && !obj->if_contains("method")
          && boost::json::serialize(obj->at("id")) == id)
        return f;
    }
    return "<no reply>";
  }

  void check_runs_gone() {
    CAF_CHECK(link_state().runs.empty());
    CAF_CHECK_EQUAL(live(actor_kind::active_action), actions_at_start);
    CAF_CHECK_EQUAL(live(actor_kind::bidi_session), bidis_at_start);
  }
};

} // namespace actor_host::testing
