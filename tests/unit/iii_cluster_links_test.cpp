#define CAF_SUITE iii_cluster_links

#include "test_support.hpp"
#include "iii_fixture.hpp"

#include "actors/cluster/cluster_types.hpp"
#include "actors/cluster/gateway.hpp"
#include "actors/iii/channel.hpp"
#include "actors/iii/channel_link.hpp"
#include "actors/iii/function_registry.hpp"
#include "actors/iii/worker_connection.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

// Trigger bindings and channels across nodes (docs/CLUSTER.md): each node's
// function registry and cluster gateway in one deterministic actor system,
// the gateways each other's peers. A lost node is its gateway's death with
// remote_link_unreachable, as CAF kills a lost node's proxies.

namespace {

/// Records the iii batches a "peer gateway" gets.
struct wire_log_state {
  std::vector<iii_wire> got;
  static inline const char* name = "wire_log";
};

caf::behavior wire_log(caf::stateful_actor<wire_log_state>* self) {
  return {
    [self](gw_requests_atom, std::vector<iii_wire>& batch) {
      for (auto& w : batch)
        self->state.got.push_back(std::move(w));
    },
  };
}

/// A function registry that never answers a channel lookup (its promises kept).
struct silent_sink_state {
  std::vector<caf::response_promise> pending;
  static inline const char* name = "silent_sink";
};

caf::behavior silent_sink(caf::stateful_actor<silent_sink_state>* self) {
  return {
    [self](attach_atom, std::uint64_t, std::string&, std::string&, bool, std::string&) {
      self->state.pending.push_back(self->make_response_promise());
    },
  };
}

/// One more node: a registry, a gateway and a worker offering harness::tick.
struct node {
  std::string name;
  caf::actor reg;
  caf::actor gw;
  fake_transport_ptr t;
  worker_connection_actor worker;
  std::string worker_id;
};

struct links_fixture : iii_fixture {
  caf::actor gw_a;
  fake_transport_ptr ta = make_fake_transport("127.0.0.1:41001");
  worker_connection_actor binder;
  std::vector<node> others;

  links_fixture() {
    gw_a = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
    caf::anon_send(reg, cluster_atom_v, caf::actor{}, gw_a, std::string{"a"});
    binder = spawn_worker(ta, opts());
    ta->clear();
  }

  /// Node `name` joined (its gateway and a's peers), with a provider of
  /// harness::tick whose set reached node a.
  node& add_node(const std::string& name) {
    node n;
    n.name = name;
    n.reg = caf::actor_cast<caf::actor>(sys.spawn(function_registry));
    n.gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
    caf::anon_send(n.reg, cluster_atom_v, caf::actor{}, n.gw, name);
    caf::anon_send(n.gw, gateway_atom_v, std::string{"a"}, gw_a);
    caf::anon_send(gw_a, gateway_atom_v, name, n.gw);
    sched.run();
    n.t = make_fake_transport("127.0.0.1:4200" + std::to_string(others.size()));
    n.worker = sys.spawn(worker_connection, net::transport_ptr{n.t},
                         caf::actor_cast<function_registry_actor>(n.reg), door(dir, {}, n.reg),
                         opts());
    sched.run();
    n.worker_id = member_str(n.t->frame(0), {"worker_id"});
    send_frame(n.worker, R"({"type":"registertriggertype","id":"harness::tick","description":"t"})");
    n.t->clear();
    iii_node_set set;
    worker_wire w;
    w.id = n.worker_id;
    set.workers.push_back(w);
    set.types.push_back({"harness::tick", n.worker_id, "t"});
    caf::anon_send(reg, fn_set_atom_v, name, set);
    sched.run();
    others.push_back(std::move(n));
    return others.back();
  }

  /// The frames of type `type` `t` got (the others are dropped).
  static std::vector<std::string> frames_of(const fake_transport_ptr& t, const std::string& type) {
    std::vector<std::string> out;
    for (auto& f : t->take())
      if (member_str(f, {"type"}) == type)
        out.push_back(f);
    return out;
  }

  void bind(const std::string& id, const std::string& config = R"({"count":2})") {
    send_frame(binder, R"({"type":"registertrigger","id":")" + id
                         + R"(","trigger_type":"harness::tick","function_id":"caller::on_tick",)"
                         + R"("config":)" + config + R"(,"metadata":{"source":"harness"}})");
  }

  void finish() {
    stop(binder, caf::exit_reason::user_shutdown);
    for (auto& n : others) {
      stop(n.worker, caf::exit_reason::user_shutdown);
      stop(n.reg, caf::exit_reason::user_shutdown);
      stop(n.gw);
    }
    stop(gw_a);
    set_channel_cluster({}, {});
    stop_iii_and_check();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(iii_cluster_links_tests, links_fixture)

CAF_TEST(a binding for another node s trigger type reaches its provider and the rejection comes back) {
  auto& b = add_node("b");
  bind("t1", R"({"reject":true})");
  auto sent = frames_of(b.t, "registertrigger");
  CAF_REQUIRE_EQUAL(sent.size(), 1u);
  CAF_CHECK_EQUAL(member_str(sent[0], {"id"}), "t1");
  CAF_CHECK_EQUAL(member_str(sent[0], {"function_id"}), "caller::on_tick");
  CAF_CHECK_EQUAL(member(sent[0], {"config"}), R"({"reject":true})");
  CAF_CHECK_EQUAL(member(sent[0], {"metadata"}), R"({"source":"harness"})");
  // The provider's rejection: the binder at a hears it.
  send_frame(b.worker, R"({"type":"triggerregistrationresult","id":"t1","trigger_type":)"
                         R"("harness::tick","function_id":"caller::on_tick","error":)"
                         R"({"code":"x","message":"tick config rejected: reject=true"}})");
  auto results = frames_of(ta, "triggerregistrationresult");
  CAF_REQUIRE_EQUAL(results.size(), 1u);
  CAF_CHECK_EQUAL(member_str(results[0], {"id"}), "t1");
  CAF_CHECK_EQUAL(member_str(results[0], {"error", "message"}), "tick config rejected: reject=true");
  // A success is no news for a worker's binding.
  bind("t2");
  send_frame(b.worker, R"({"type":"triggerregistrationresult","id":"t2","trigger_type":)"
                         R"("harness::tick","function_id":"caller::on_tick"})");
  CAF_CHECK_EQUAL(frames_of(ta, "triggerregistrationresult").size(), 0u);
  // Unbinding travels too.
  send_frame(binder, R"({"type":"unregistertrigger","id":"t2"})");
  auto gone = frames_of(b.t, "unregistertrigger");
  CAF_REQUIRE_EQUAL(gone.size(), 1u);
  CAF_CHECK_EQUAL(member_str(gone[0], {"id"}), "t2");
  finish();
}

CAF_TEST(engine register_trigger for another node s type waits for that provider s answer) {
  auto& b = add_node("b");
  auto call = [&](const std::string& id, const std::string& config) {
    send_frame(binder, R"({"type":"invokefunction","invocation_id":")" + id
                         + R"(","function_id":"engine::register_trigger","data":)"
                         + R"({"trigger_type":"harness::tick","function_id":"caller::on_tick",)"
                         + R"("config":)" + config + "}}");
  };
  call("c1", R"({"reject":true})");
  CAF_CHECK_EQUAL(frames_of(ta, "invocationresult").size(), 0u);
  auto sent = frames_of(b.t, "registertrigger");
  CAF_REQUIRE_EQUAL(sent.size(), 1u);
  auto tid = member_str(sent[0], {"id"});
  send_frame(b.worker, R"({"type":"triggerregistrationresult","id":")" + tid
                         + R"(","trigger_type":"harness::tick","function_id":"caller::on_tick",)"
                         + R"("error":{"code":"x","message":"rejected"}})");
  auto answers = frames_of(ta, "invocationresult");
  CAF_REQUIRE_EQUAL(answers.size(), 1u);
  CAF_CHECK_EQUAL(member_str(answers[0], {"error", "message"}), "rejected");
  // The refused binding is gone here, and its copy at b too.
  auto& st = deref<function_registry_actor::stateful_base<function_registry_state>>(reg).state;
  CAF_CHECK_EQUAL(st.triggers.size(), 0u);
  CAF_CHECK_EQUAL(deref<function_registry_actor::stateful_base<function_registry_state>>(b.reg).state.triggers.size(),
                  0u);
  // A success answers {id}.
  call("c2", "{}");
  sent = frames_of(b.t, "registertrigger");
  CAF_REQUIRE_EQUAL(sent.size(), 1u);
  tid = member_str(sent[0], {"id"});
  send_frame(b.worker, R"({"type":"triggerregistrationresult","id":")" + tid
                         + R"(","trigger_type":"harness::tick","function_id":"caller::on_tick"})");
  answers = frames_of(ta, "invocationresult");
  CAF_REQUIRE_EQUAL(answers.size(), 1u);
  CAF_CHECK_EQUAL(member_str(answers[0], {"result", "id"}), tid);
  finish();
}

CAF_TEST(a binding outlives its provider s node and goes to the next node offering its type) {
  auto& b = add_node("b");
  bind("t1");
  CAF_CHECK_EQUAL(frames_of(b.t, "registertrigger").size(), 1u);
  // Node b is lost (as seen at a); b in turn loses a and drops a's binding.
  caf::anon_send(reg, node_lost_atom_v, std::string{"b"});
  caf::anon_send(b.reg, node_lost_atom_v, std::string{"a"});
  sched.run();
  CAF_CHECK_EQUAL(frames_of(b.t, "unregistertrigger").size(), 1u);
  auto& st = deref<function_registry_actor::stateful_base<function_registry_state>>(reg).state;
  CAF_REQUIRE(st.triggers.count("t1") == 1);
  CAF_CHECK(!st.triggers.at("t1").active);
  // Node c comes with a provider of the type: the binding goes there.
  auto& c = add_node("c");
  auto sent = frames_of(c.t, "registertrigger");
  CAF_REQUIRE_EQUAL(sent.size(), 1u);
  CAF_CHECK_EQUAL(member_str(sent[0], {"id"}), "t1");
  CAF_CHECK(st.triggers.at("t1").active);
  CAF_CHECK_EQUAL(st.triggers.at("t1").remote_node, "c");
  // A set of c's that still offers the type changes nothing.
  iii_node_set same;
  same.types.push_back({"harness::tick", c.worker_id, "t"});
  caf::anon_send(reg, fn_set_atom_v, std::string{"c"}, same);
  sched.run();
  CAF_CHECK_EQUAL(frames_of(c.t, "registertrigger").size(), 0u);
  // A provider at a itself wins: c is told to let go.
  send_frame(binder, R"({"type":"registertriggertype","id":"harness::tick","description":"t"})");
  CAF_CHECK_EQUAL(frames_of(c.t, "unregistertrigger").size(), 1u);
  CAF_CHECK_EQUAL(frames_of(ta, "registertrigger").size(), 1u);
  finish();
}

CAF_TEST(a peer s binding messages are checked and capped) {
  auto& b = add_node("b");
  auto& bst = deref<function_registry_actor::stateful_base<function_registry_state>>(b.reg).state;
  iii_wire bad;
  bad.kind = iii_wire::bind;
  bad.id = std::string(1, '\x01'); // not peer text
  bad.type = "harness::tick";
  bad.function_id = "f";
  bad.config = "{}";
  caf::anon_send(b.reg, bind_atom_v, std::string{"a"}, bad);
  bad.id = "ok-id";
  bad.config = "{not json";
  caf::anon_send(b.reg, bind_atom_v, std::string{"a"}, bad);
  sched.run();
  CAF_CHECK_EQUAL(bst.triggers.size(), 0u);
  CAF_CHECK_EQUAL(frames_of(b.t, "registertrigger").size(), 0u);
  // At most max_iii_remote_bindings_per_node of one node.
  iii_wire w = bad;
  w.config = "{}";
  for (std::size_t i = 0; i <= max_iii_remote_bindings_per_node; ++i) {
    w.id = "r" + std::to_string(i);
    caf::anon_send(b.reg, bind_atom_v, std::string{"a"}, w);
  }
  sched.run();
  CAF_CHECK_EQUAL(bst.triggers.size(), max_iii_remote_bindings_per_node);
  b.t->clear();
  finish();
}

CAF_TEST(a channel end at another node streams in order with backpressure and the loss of its node ends the channel) {
  auto& b = add_node("b");
  // Node b's worker creates a channel (buffer 1): its id names b.
  set_channel_cluster("b", b.gw);
  send_frame(b.worker, R"({"type":"invokefunction","invocation_id":"c1","function_id":)"
                       R"("engine::channels::create","data":{"buffer_size":1}})");
  auto answer = b.t->last();
  auto id = member_str(answer, {"result", "writer", "channel_id"});
  auto key = member_str(answer, {"result", "writer", "access_key"});
  CAF_CHECK(id.ends_with("~b"));
  // Its reader at b, its writer at a.
  auto reader = make_fake_transport("127.0.0.1:43001");
  reader->set_upgrade("/ws/channels/" + id + "?key=" + key + "&dir=read");
  auto rh = open_channel_end(reader);
  set_channel_cluster("a", gw_a);
  auto writer = make_fake_transport("127.0.0.1:43002");
  writer->set_upgrade("/ws/channels/" + id + "?key=" + key + "&dir=write");
  CAF_CHECK_EQUAL(check_channel_upgrade(writer->upgrade()), 0);
  auto wh = open_channel_end(writer);
  CAF_REQUIRE(wh != nullptr);
  sched.run();
  // One frame may go before b's buffer size reached a; then one at a time.
  wh->on_text("m1");
  CAF_CHECK(writer->paused());
  sched.run();
  CAF_CHECK(!writer->paused());
  wh->on_text("m2");
  CAF_CHECK(writer->paused());
  CAF_CHECK(wh->on_binary("m3"));
  sched.run();
  CAF_CHECK_EQUAL(reader->frames(), (std::vector<std::string>{"m1", "m2", "bin:m3"}));
  CAF_CHECK(!writer->paused());
  // A wrong key at a is refused by b.
  auto stranger = make_fake_transport("127.0.0.1:43003");
  stranger->set_upgrade("/ws/channels/" + id + "?key=nope&dir=write");
  auto sh = open_channel_end(stranger);
  sched.run();
  CAF_CHECK_EQUAL(stranger->close_code(), 1008);
  // Node a is lost: b's reader hears why.
  caf::anon_send_exit(gw_a, caf::exit_reason::remote_link_unreachable);
  sched.run();
  CAF_CHECK_EQUAL(reader->close_code(), 1011);
  CAF_CHECK_EQUAL(reader->close_reason(), "channel writer's node a is unreachable");
  CAF_CHECK_EQUAL(writer->close_code(), 1011);
  set_channel_cluster({}, {});
  finish();
}

CAF_TEST(a reader at another node holds the writer until its node has handed it the frames) {
  auto& b = add_node("b");
  set_channel_cluster("b", b.gw);
  send_frame(b.worker, R"({"type":"invokefunction","invocation_id":"c1","function_id":)"
                       R"("engine::channels::create","data":{"buffer_size":1}})");
  auto answer = b.t->last();
  auto id = member_str(answer, {"result", "writer", "channel_id"});
  auto key = member_str(answer, {"result", "writer", "access_key"});
  // The writer at b (the channel's node), the reader at a.
  auto writer = make_fake_transport("127.0.0.1:43011");
  writer->set_upgrade("/ws/channels/" + id + "?key=" + key + "&dir=write");
  auto wh = open_channel_end(writer);
  set_channel_cluster("a", gw_a);
  auto reader = make_fake_transport("127.0.0.1:43012");
  reader->set_upgrade("/ws/channels/" + id + "?key=" + key + "&dir=read");
  auto rh = open_channel_end(reader);
  sched.run();
  for (auto frame : {"m1", "m2", "m3"}) {
    wh->on_text(frame);
    CAF_CHECK(writer->paused());
    // Step by step: the writer goes on only once the frame is in a's socket.
    auto had = reader->size();
    while (sched.try_run_once())
      if (!writer->paused())
        CAF_CHECK_EQUAL(reader->size(), had + 1);
    CAF_CHECK(!writer->paused());
  }
  CAF_CHECK_EQUAL(reader->frames(), (std::vector<std::string>{"m1", "m2", "m3"}));
  // The writer finishes: a's reader gets the close as it came.
  wh->on_peer_close(1000, "stream_complete");
  wh->on_closed("closed by peer");
  sched.run();
  CAF_CHECK_EQUAL(reader->close_code(), 1000);
  CAF_CHECK_EQUAL(reader->close_reason(), "stream_complete");
  finish();
}

CAF_TEST(frames on the way to a reader at another node are capped) {
  // A channel of a (buffer 2) whose reader is at another node, and a writer
  // that does not stop at its limits (a peer node past its credits).
  send_frame(binder, R"({"type":"invokefunction","invocation_id":"c1","function_id":)"
                     R"("engine::channels::create","data":{"buffer_size":2}})");
  auto answer = ta->last();
  auto id = member_str(answer, {"result", "writer", "channel_id"});
  auto key = member_str(answer, {"result", "writer", "access_key"});
  auto ch = channels().find(id, key);
  CAF_REQUIRE(ch != nullptr);
  struct far_reader : remote_channel_end {
    std::vector<std::string> got;
    std::uint16_t code = 0;
    std::string peer_ = "node z";
    void send_text(std::string f) override { got.push_back(std::move(f)); }
    void send_binary(std::string f) override { got.push_back(std::move(f)); }
    void close(std::uint16_t c, std::string) override { code = c; }
    void released(std::int64_t) override {}
    const std::string& peer() const override { return peer_; }
  };
  auto reader = std::make_shared<far_reader>();
  auto wt = make_fake_transport("127.0.0.1:43021");
  caf::anon_send(ch, attach_atom_v, false, net::transport_ptr{reader});
  caf::anon_send(ch, attach_atom_v, true, net::transport_ptr{wt});
  sched.run();
  for (int i = 0; i < 3; ++i)
    caf::anon_send(ch, channel_frame_atom_v, true, false, "f" + std::to_string(i));
  sched.run();
  CAF_CHECK_EQUAL(reader->got.size(), 3u);
  CAF_CHECK_EQUAL(reader->code, 0);
  // Its node takes one: there is room for one more, not two.
  caf::anon_send(ch, slot_atom_v, std::uint64_t{1});
  caf::anon_send(ch, channel_frame_atom_v, true, false, std::string{"f3"});
  sched.run();
  CAF_CHECK_EQUAL(reader->code, 0);
  caf::anon_send(ch, channel_frame_atom_v, true, false, std::string{"f4"});
  sched.run();
  CAF_CHECK_EQUAL(reader->code, 1008);
  CAF_CHECK_EQUAL(wt->close_reason(), "channel buffer full");
  finish();
}

CAF_TEST(a peer s channel opens are capped and so is what it sends before the channel is found) {
  auto log = sys.spawn(wire_log);
  auto sink = sys.spawn(silent_sink);
  auto gw = caf::actor_cast<caf::actor>(spawn_cluster_gateway(sys));
  caf::anon_send(gw, subscribe_atom_v, sink);
  caf::anon_send(gw, gateway_atom_v, std::string{"x"}, log);
  sched.run();
  auto open = [](std::uint64_t link) {
    iii_wire w;
    w.kind = iii_wire::ch_open;
    w.link = link;
    w.flag = true;
    w.id = "ch~y";
    w.text = "key";
    return w;
  };
  std::vector<iii_wire> batch;
  batch.push_back(open(1));
  for (int i = 0; i < 5; ++i) {
    iii_wire f;
    f.kind = iii_wire::ch_frame;
    f.link = 1;
    f.text = "f" + std::to_string(i);
    batch.push_back(f);
  }
  caf::send_as(log, gw, gw_requests_atom_v, batch);
  sched.run();
  auto& got = deref<caf::stateful_actor<wire_log_state>>(log).state.got;
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].kind, iii_wire::ch_close);
  CAF_CHECK_EQUAL(got[0].text, "channel protocol violated");
  got.clear();
  batch.clear();
  for (std::uint64_t i = 0; i <= max_iii_links_per_node; ++i)
    batch.push_back(open(100 + i));
  caf::send_as(log, gw, gw_requests_atom_v, batch);
  sched.run();
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].link, 100 + max_iii_links_per_node);
  CAF_CHECK_EQUAL(got[0].text, "too many channel ends from this node");
  stop(gw);
  stop(sink);
  stop(log);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
