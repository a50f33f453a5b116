#include "testing/fake_apiserver.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <stdexcept>

#include <httplib.h>

namespace gpusched::testing {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string FakeApiServer::kToken = "fake-apiserver-token";

namespace {

const std::string kNodes = "/api/v1/nodes";
const std::string kPods = "/api/v1/pods";

struct Event {
  int64_t rv;
  std::string collection;  // kNodes, kPods or another collection's path
  std::string line;        // {"type":...,"object":...}
};

std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}}
      .dump();
}

}  // namespace

struct FakeApiServer::Impl {
  explicit Impl(const FakeApiServerTls* tls)
      : server(tls ? std::make_unique<httplib::SSLServer>(
                         tls->cert_file.c_str(), tls->key_file.c_str(),
                         tls->client_ca_file.empty() ? nullptr : tls->client_ca_file.c_str())
                   : std::make_unique<httplib::Server>()),
        http(*server) {}
  std::unique_ptr<httplib::Server> server;
  httplib::Server& http;
  mutable std::mutex mu;
  std::condition_variable changed;
  int64_t rv = 100;
  int64_t compacted_rv = 0;
  std::map<std::string, json> nodes;
  std::map<std::string, json> pods;  // namespace/name
  // Other collections by path, each namespace/name -> object; only those ever written are served.
  std::map<std::string, std::map<std::string, json>> others;
  std::map<std::string, json> leases;  // namespace/name
  uint64_t writes = 0;
  int64_t next_uid = 1;

  void Answer(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }
  void Refuse(httplib::Response& res, int status, const std::string& reason) {
    res.status = status;
    res.set_content(StatusJson(status, reason, reason), "application/json");
  }

  void PodItem(const httplib::Request& req, httplib::Response& res) {
    if (Intercept(req, res)) return;
    std::lock_guard lock(mu);
    std::string key = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
    auto it = pods.find(key);
    if (it == pods.end()) return Refuse(res, 404, "NotFound");
    if (req.method == "GET") return Answer(res, 200, it->second);
    if (req.method == "PATCH") {  // a merge patch of metadata.labels and annotations
      json patch = json::parse(req.body, nullptr, false);
      if (!patch.is_object()) return Refuse(res, 400, "BadRequest");
      json pod = it->second;
      for (const char* key : {"labels", "annotations"}) {
        if (patch["metadata"].is_object() && patch["metadata"][key].is_object()) {
          pod["metadata"][key].update(patch["metadata"][key]);
        }
      }
      Record(kPods, "MODIFIED", pod);
      ++writes;
      return Answer(res, 200, pods[key]);
    }
    json options = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    std::string want_uid =
        options.is_object() ? options.value("/preconditions/uid"_json_pointer, "") : "";
    if (!want_uid.empty() && want_uid != it->second["metadata"].value("uid", "")) {
      return Refuse(res, 409, "Conflict");
    }
    json last = it->second;
    pods.erase(it);
    Record(kPods, "DELETED", last);
    ++writes;
    Answer(res, 200, last);
  }

  void PodCreate(const httplib::Request& req, httplib::Response& res) {
    if (Intercept(req, res)) return;
    std::lock_guard lock(mu);
    json pod = json::parse(req.body, nullptr, false);
    if (!pod.is_object() || !pod["metadata"].is_object()) return Refuse(res, 400, "BadRequest");
    pod["metadata"]["namespace"] = std::string(req.matches[1]);
    std::string key = std::string(req.matches[1]) + "/" + pod["metadata"].value("name", "");
    if (pods.count(key)) return Refuse(res, 409, "AlreadyExists");
    if (!pod["metadata"].contains("uid")) {
      pod["metadata"]["uid"] = "fake-uid-" + std::to_string(next_uid++);
    }
    Record(kPods, "ADDED", pod);
    ++writes;
    Answer(res, 201, pods[key]);
  }

  void LeaseRoute(const httplib::Request& req, httplib::Response& res) {
    if (Intercept(req, res)) return;
    std::lock_guard lock(mu);
    std::string ns = req.matches[1];
    std::string name = req.matches.size() > 2 ? std::string(req.matches[2]) : "";
    if (req.method == "GET") {
      auto it = leases.find(ns + "/" + name);
      if (it == leases.end()) return Refuse(res, 404, "NotFound");
      return Answer(res, 200, it->second);
    }
    json lease = json::parse(req.body, nullptr, false);
    if (!lease.is_object() || !lease["metadata"].is_object()) return Refuse(res, 400, "BadRequest");
    if (req.method == "POST") name = lease["metadata"].value("name", "");
    std::string key = ns + "/" + name;
    auto it = leases.find(key);
    if (req.method == "POST" && it != leases.end()) return Refuse(res, 409, "AlreadyExists");
    if (req.method == "PUT") {
      if (it == leases.end()) return Refuse(res, 404, "NotFound");
      if (lease["metadata"].value("resourceVersion", "") !=
          it->second["metadata"].value("resourceVersion", "")) {
        return Refuse(res, 409, "Conflict");
      }
    }
    lease["metadata"]["resourceVersion"] = std::to_string(++rv);
    leases[key] = lease;
    ++writes;
    Answer(res, req.method == "POST" ? 201 : 200, lease);
  }
  std::vector<Event> events;
  // Pages of one list come from the snapshot taken at its first page, as the real server's do.
  std::map<std::string, std::pair<int64_t, std::shared_ptr<const std::vector<std::string>>>>
      list_snapshots;
  int list_tokens = 0;
  // faults
  std::string token;
  int fail_count = 0;
  int fail_status = 500;
  std::chrono::milliseconds delay{0};
  int hang_count = 0;
  uint64_t hang_release_generation = 0;
  std::set<std::string> hung_collections;
  bool duplicate = false;
  uint64_t drop_generation = 0;
  uint64_t close_generation = 0;
  bool gone_as_http = false;
  std::optional<std::string> watch_answer;
  bool endless_lists = false;
  WatchListAnswer watch_list_answer = WatchListAnswer::kStreamed;
  std::atomic<uint64_t> watch_lists{0};
  std::chrono::milliseconds bookmark_interval{1000};
  std::atomic<uint64_t> lists{0};
  std::atomic<uint64_t> watches{0};
  bool stopping = false;

  std::map<std::string, json>& Store(const std::string& collection) {
    return collection == kPods ? pods : collection == kNodes ? nodes : others[collection];
  }

  void Record(const std::string& collection, const std::string& type, json object) {
    object["metadata"]["resourceVersion"] = std::to_string(++rv);
    events.push_back({rv, collection, json{{"type", type}, {"object", object}}.dump()});
    if (type != "DELETED") {
      std::string key = collection == kNodes ? object["metadata"].value("name", "")
                                             : object["metadata"].value("namespace", "") + "/" +
                                                   object["metadata"].value("name", "");
      Store(collection)[key] = std::move(object);
    }
    changed.notify_all();
  }

  // The kind of a collection's objects, and of its list.
  static std::string KindOf(const std::string& collection) {
    return collection == kPods ? "Pod" : collection == kNodes ? "Node" : "Object";
  }

  // Applies delay, hang, auth and failure faults; true when the request was answered here.
  bool Intercept(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock lock(mu);
    if (delay.count() > 0) {
      auto d = delay;
      lock.unlock();
      std::this_thread::sleep_for(d);
      lock.lock();
    }
    if (hang_count > 0) {
      --hang_count;
      uint64_t generation = hang_release_generation;
      changed.wait_for(lock, std::chrono::seconds(30),
                       [&] { return stopping || hang_release_generation != generation; });
    }
    if (!token.empty() && req.get_header_value("Authorization") != "Bearer " + token) {
      res.status = 401;
      res.set_content(StatusJson(401, "Unauthorized", "Unauthorized"), "application/json");
      return true;
    }
    if (fail_count > 0) {
      --fail_count;
      res.status = fail_status;
      res.set_content(StatusJson(fail_status, "InjectedFault", "injected failure"),
                      "application/json");
      if (fail_status == 429) res.set_header("Retry-After", "1");
      return true;
    }
    return false;
  }

  void List(const std::string& collection, const httplib::Request& req, httplib::Response& res) {
    lists.fetch_add(1);
    std::lock_guard lock(mu);
    size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
    std::string cont = req.get_param_value("continue");
    std::string token_key = cont;
    if (cont.empty()) {
      std::vector<std::string> items;
      for (const auto& [key, obj] : Store(collection)) items.push_back(obj.dump());
      token_key = "t" + std::to_string(++list_tokens) + "-0";
      list_snapshots[token_key] = {
          rv, std::make_shared<const std::vector<std::string>>(std::move(items))};
    }
    auto it = list_snapshots.find(token_key);
    if (it == list_snapshots.end() || it->second.first < compacted_rv) {
      res.status = 410;
      res.set_content(StatusJson(410, "Expired", "the continue token has expired"),
                      "application/json");
      return;
    }
    size_t offset = std::stoul(token_key.substr(token_key.rfind('-') + 1));
    auto [list_rv, snapshot] = it->second;
    const std::vector<std::string>& items = *snapshot;
    size_t end = limit == 0 ? items.size() : std::min(items.size(), offset + limit);
    std::string next;
    if (end < items.size() || endless_lists) {
      size_t resume = end < items.size() ? end : offset;  // endless: the last page again
      next = token_key.substr(0, token_key.rfind('-') + 1) + std::to_string(resume);
    }
    std::string body = std::string(R"({"kind":")") + KindOf(collection) + "List" +
                       R"(","apiVersion":"v1","metadata":{"resourceVersion":")" +
                       std::to_string(list_rv) + "\"";
    if (!next.empty()) body += R"(,"continue":")" + next + "\"";
    body += R"(},"items":[)";
    for (size_t i = offset; i < end; ++i) body += (i > offset ? "," : "") + items[i];
    body += "]}";
    auto kept = it->second;
    list_snapshots.erase(token_key);
    if (!next.empty()) list_snapshots[next] = kept;
    res.set_content(body, "application/json");
  }

  // A watch-list's initial events: every object of a collection as one ADDED event, taken under
  // the lock, written a batch per call of the content provider, then (kStreamed) the bookmark.
  struct InitialEvents {
    std::vector<std::string> lines;
    size_t next = 0;
    std::string end_bookmark;  // empty: never sent
    bool done = false;
    // Writes the next batch; false when the connection is gone.
    bool Write(httplib::DataSink& sink) {
      if (done) return true;
      std::string batch;
      for (size_t stop = std::min(lines.size(), next + 200); next < stop; ++next) {
        batch += lines[next];
      }
      if (next == lines.size()) {
        batch += end_bookmark;
        done = true;
        lines = {};
      }
      return batch.empty() || sink.write(batch.data(), batch.size());
    }
  };
  std::shared_ptr<InitialEvents> InitialEventsOf(const std::string& collection) {
    auto initial = std::make_shared<InitialEvents>();
    for (const auto& [key, obj] : Store(collection)) {
      initial->lines.push_back(json{{"type", "ADDED"}, {"object", obj}}.dump() + "\n");
    }
    if (watch_list_answer == WatchListAnswer::kStreamed) {
      json meta = {{"resourceVersion", std::to_string(rv)},
                   {"annotations", {{"k8s.io/initial-events-end", "true"}}}};
      initial->end_bookmark =
          json{{"type", "BOOKMARK"},
               {"object", {{"kind", KindOf(collection)}, {"apiVersion", "v1"}, {"metadata", meta}}}}
              .dump() +
          "\n";
    }
    return initial;
  }
  // Answers a watch-list the server is set to refuse, or one without the parameter the real
  // server requires beside sendInitialEvents; true when it did.
  bool RefuseWatchList(const httplib::Request& req, httplib::Response& res) {
    if (watch_list_answer == WatchListAnswer::kInvalid ||
        req.get_param_value("resourceVersionMatch") != "NotOlderThan") {
      res.status = 422;
      res.set_content(StatusJson(422, "Invalid", "sendInitialEvents is not allowed here"),
                      "application/json");
      return true;
    }
    if (watch_list_answer == WatchListAnswer::kErrorEvent) {
      std::string message =
          "a watch stream was requested by the client but the required storage feature "
          "RequestWatchProgress is disabled";
      res.set_content(json{{"type", "ERROR"},
                           {"object", json::parse(StatusJson(500, "InternalError", message))}}
                              .dump() +
                          "\n",
                      "application/json");
      return true;
    }
    return false;
  }

  void Watch(const std::string& collection, const httplib::Request& req, httplib::Response& res) {
    watches.fetch_add(1);
    int64_t from = 0;
    try {
      from = std::stoll(req.get_param_value("resourceVersion"));
    } catch (...) {
      from = 0;
    }
    int timeout =
        req.has_param("timeoutSeconds") ? std::stoi(req.get_param_value("timeoutSeconds")) : 60;
    bool bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
    bool watch_list = req.get_param_value("sendInitialEvents") == "true";
    std::unique_lock lock(mu);
    if (watch_answer) {
      res.set_content(*watch_answer, "application/json");
      return;
    }
    std::shared_ptr<InitialEvents> initial;
    if (watch_list) {
      watch_lists.fetch_add(1);
      if (RefuseWatchList(req, res)) return;
      initial = InitialEventsOf(collection);
      from = rv;
    }
    if (from < compacted_rv) {
      if (gone_as_http) {
        res.status = 410;
        res.set_content(StatusJson(410, "Expired", "too old resource version"), "application/json");
        return;
      }
      std::string line =
          json{{"type", "ERROR"},
               {"object", json::parse(StatusJson(410, "Expired", "too old resource version"))}}
              .dump() +
          "\n";
      res.set_content(line, "application/json");
      return;
    }
    auto deadline = Clock::now() + std::chrono::seconds(timeout);
    struct State {
      int64_t next;
      uint64_t drop_generation;
      uint64_t close_generation;
      Clock::time_point last_bookmark;
    };
    auto state =
        std::make_shared<State>(State{from, drop_generation, close_generation, Clock::now()});
    lock.unlock();
    res.set_chunked_content_provider("application/json", [this, state, deadline, bookmarks,
                                                          collection, initial](
                                                             size_t, httplib::DataSink& sink) {
      if (initial && !initial->done) return initial->Write(sink);  // the events, then the watch
      std::unique_lock lock(mu);
      auto pending = [&] {
        return std::find_if(events.begin(), events.end(), [&](const Event& e) {
          return e.rv > state->next && e.collection == collection;
        });
      };
      auto next_wake = std::min(deadline, state->last_bookmark + bookmark_interval);
      changed.wait_until(lock, next_wake, [&] {
        return stopping || pending() != events.end() || state->next < compacted_rv ||
               drop_generation != state->drop_generation ||
               close_generation != state->close_generation;
      });
      if (stopping || close_generation != state->close_generation || Clock::now() >= deadline) {
        sink.done();
        return true;
      }
      if (state->next < compacted_rv) {  // compacted while watching: the server gives up
        std::string line =
            json{{"type", "ERROR"},
                 {"object", json::parse(StatusJson(410, "Expired", "too old resource version"))}}
                .dump() +
            "\n";
        sink.write(line.data(), line.size());
        sink.done();
        return true;
      }
      for (auto it = pending(); it != events.end(); ++it) {
        if (it->collection != collection || it->rv <= state->next) continue;
        std::string line = it->line + "\n";
        if (drop_generation != state->drop_generation) {
          sink.write(line.data(), line.size() / 2);
          return false;  // drops the connection mid-event
        }
        for (int copy = 0; copy < (duplicate ? 2 : 1); ++copy) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        state->next = it->rv;
      }
      if (drop_generation != state->drop_generation) return false;
      if (bookmarks && Clock::now() >= state->last_bookmark + bookmark_interval) {
        state->last_bookmark = Clock::now();
        state->next = std::max(state->next, rv);
        std::string line =
            json{{"type", "BOOKMARK"},
                 {"object",
                  {{"kind", KindOf(collection)},
                   {"apiVersion", "v1"},
                   {"metadata", {{"resourceVersion", std::to_string(state->next)}}}}}}
                .dump() +
            "\n";
        if (!sink.write(line.data(), line.size())) return false;
      }
      return true;
    });
  }

  void Route(const std::string& collection, const httplib::Request& req, httplib::Response& res) {
    if (Intercept(req, res)) return;
    if (req.get_param_value("watch") == "true") {
      Watch(collection, req, res);
    } else {
      List(collection, req, res);
    }
  }

  // Another collection: served once an object was written to it; before, 404 as a resource the
  // server does not serve, past every fault (the faults a test injects are for nodes and pods).
  void OtherRoute(const httplib::Request& req, httplib::Response& res) {
    {
      std::unique_lock lock(mu);
      if (!others.count(req.path)) return Refuse(res, 404, "NotFound");
      if (hung_collections.count(req.path)) {
        uint64_t generation = hang_release_generation;
        changed.wait_for(lock, std::chrono::seconds(30),
                         [&] { return stopping || hang_release_generation != generation; });
      }
    }
    Route(req.path, req, res);
  }
};

FakeApiServer::FakeApiServer(int port, const FakeApiServerTls* tls)
    : impl_(std::make_unique<Impl>(tls)), https_(tls != nullptr) {
  auto& http = impl_->http;
  if (!http.is_valid()) throw std::runtime_error("fake API server: invalid TLS certificate or key");
  http.new_task_queue = [] { return new httplib::ThreadPool(32); };
  http.set_tcp_nodelay(true);
  http.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
    impl_->Route(kNodes, req, res);
  });
  http.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
    impl_->Route(kPods, req, res);
  });
  const char* pod_item = R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))";
  http.Get(pod_item, [this](const httplib::Request& req, httplib::Response& res) {
    impl_->PodItem(req, res);
  });
  http.Delete(pod_item, [this](const httplib::Request& req, httplib::Response& res) {
    impl_->PodItem(req, res);
  });
  http.Patch(pod_item, [this](const httplib::Request& req, httplib::Response& res) {
    impl_->PodItem(req, res);
  });
  http.Post(
      R"(/api/v1/namespaces/([^/]+)/pods)",
      [this](const httplib::Request& req, httplib::Response& res) { impl_->PodCreate(req, res); });
  const char* lease_item = R"(/apis/coordination.k8s.io/v1/namespaces/([^/]+)/leases/([^/]+))";
  auto lease = [this](const httplib::Request& req, httplib::Response& res) {
    impl_->LeaseRoute(req, res);
  };
  http.Get(lease_item, lease);
  http.Put(lease_item, lease);
  http.Post(R"(/apis/coordination.k8s.io/v1/namespaces/([^/]+)/leases)", lease);
  // Last: the routes above match first.
  http.Get(R"(/apis/.+)", [this](const httplib::Request& req, httplib::Response& res) {
    impl_->OtherRoute(req, res);
  });
  port_ = port == 0 ? http.bind_to_any_port("127.0.0.1") : port;
  if (port != 0 && !http.bind_to_port("127.0.0.1", port)) port_ = -1;
  if (port_ <= 0) throw std::runtime_error("fake API server: cannot bind 127.0.0.1");
  thread_ = std::thread([this] { impl_->http.listen_after_bind(); });
  // stop() before the listen loop runs would be lost and the destructor would hang: wait for it.
  for (int i = 0; i < 5000 && !impl_->http.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  impl_->http.stop();
  thread_.join();
}

std::string FakeApiServer::url() const {
  return (https_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
}

void FakeApiServer::WriteKubeconfig(const std::string& path) const {
  std::ofstream out(path);
  out << "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
      << "clusters:\n- name: fake\n  cluster:\n    server: " << url() << "\n"
      << "users:\n- name: fake\n  user:\n    token: " << kToken << "\n"
      << "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n";
}

void FakeApiServer::UpsertNode(json node) {
  std::lock_guard lock(impl_->mu);
  bool exists = impl_->nodes.count(node["metadata"].value("name", ""));
  impl_->Record(kNodes, exists ? "MODIFIED" : "ADDED", std::move(node));
}

void FakeApiServer::DeleteNode(const std::string& name) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->nodes.find(name);
  if (it == impl_->nodes.end()) return;
  json last = it->second;
  impl_->nodes.erase(it);
  impl_->Record(kNodes, "DELETED", std::move(last));
}

void FakeApiServer::UpsertPod(json pod) {
  std::lock_guard lock(impl_->mu);
  std::string key =
      pod["metadata"].value("namespace", "") + "/" + pod["metadata"].value("name", "");
  bool exists = impl_->pods.count(key);
  impl_->Record(kPods, exists ? "MODIFIED" : "ADDED", std::move(pod));
}

void FakeApiServer::DeletePod(const std::string& ns, const std::string& name) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->pods.find(ns + "/" + name);
  if (it == impl_->pods.end()) return;
  json last = it->second;
  impl_->pods.erase(it);
  impl_->Record(kPods, "DELETED", std::move(last));
}

void FakeApiServer::UpsertObject(const std::string& collection, json object) {
  std::lock_guard lock(impl_->mu);
  std::string key =
      object["metadata"].value("namespace", "") + "/" + object["metadata"].value("name", "");
  bool exists = impl_->Store(collection).count(key);
  impl_->Record(collection, exists ? "MODIFIED" : "ADDED", std::move(object));
}

void FakeApiServer::DeleteObject(const std::string& collection, const std::string& ns,
                                 const std::string& name) {
  std::lock_guard lock(impl_->mu);
  auto& store = impl_->Store(collection);
  auto it = store.find(ns + "/" + name);
  if (it == store.end()) return;
  json last = it->second;
  store.erase(it);
  impl_->Record(collection, "DELETED", std::move(last));
}

std::optional<json> FakeApiServer::Lease(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->leases.find(ns + "/" + name);
  if (it == impl_->leases.end()) return std::nullopt;
  return it->second;
}

uint64_t FakeApiServer::writes_served() const {
  std::lock_guard lock(impl_->mu);
  return impl_->writes;
}

std::vector<json> FakeApiServer::Nodes() const {
  std::lock_guard lock(impl_->mu);
  std::vector<json> out;
  for (const auto& [k, v] : impl_->nodes) out.push_back(v);
  return out;
}

std::vector<json> FakeApiServer::Pods() const {
  std::lock_guard lock(impl_->mu);
  std::vector<json> out;
  for (const auto& [k, v] : impl_->pods) out.push_back(v);
  return out;
}

int64_t FakeApiServer::resource_version() const {
  std::lock_guard lock(impl_->mu);
  return impl_->rv;
}

void FakeApiServer::RequireToken(std::string token) {
  std::lock_guard lock(impl_->mu);
  impl_->token = std::move(token);
}

void FakeApiServer::FailNextRequests(int count, int status) {
  std::lock_guard lock(impl_->mu);
  impl_->fail_count = count;
  impl_->fail_status = status;
}

void FakeApiServer::SetDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(impl_->mu);
  impl_->delay = delay;
}

void FakeApiServer::HangNextRequests(int count) {
  std::lock_guard lock(impl_->mu);
  impl_->hang_count = count;
}

void FakeApiServer::HangCollection(const std::string& collection) {
  std::lock_guard lock(impl_->mu);
  impl_->hung_collections.insert(collection);
}

void FakeApiServer::ReleaseHangs() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->hang_count = 0;
    impl_->hung_collections.clear();
    ++impl_->hang_release_generation;
  }
  impl_->changed.notify_all();
}

void FakeApiServer::SetDuplicateEvents(bool on) {
  std::lock_guard lock(impl_->mu);
  impl_->duplicate = on;
}

void FakeApiServer::DropWatchesMidEvent() {
  {
    std::lock_guard lock(impl_->mu);
    ++impl_->drop_generation;
  }
  impl_->changed.notify_all();
}

void FakeApiServer::CloseWatches() {
  {
    std::lock_guard lock(impl_->mu);
    ++impl_->close_generation;
  }
  impl_->changed.notify_all();
}

void FakeApiServer::Compact() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->compacted_rv = impl_->rv;
    impl_->events.clear();
  }
  impl_->changed.notify_all();
}

void FakeApiServer::SetGoneAsHttpStatus(bool on) {
  std::lock_guard lock(impl_->mu);
  impl_->gone_as_http = on;
}

void FakeApiServer::SetBookmarkInterval(std::chrono::milliseconds interval) {
  std::lock_guard lock(impl_->mu);
  impl_->bookmark_interval = interval;
}

void FakeApiServer::SetWatchAnswer(std::optional<std::string> body) {
  std::lock_guard lock(impl_->mu);
  impl_->watch_answer = std::move(body);
}

void FakeApiServer::SetWatchListAnswer(WatchListAnswer answer) {
  std::lock_guard lock(impl_->mu);
  impl_->watch_list_answer = answer;
}

void FakeApiServer::SetEndlessLists(bool on) {
  std::lock_guard lock(impl_->mu);
  impl_->endless_lists = on;
}

void FakeApiServer::ClearFaults() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->fail_count = 0;
    impl_->delay = std::chrono::milliseconds(0);
    impl_->hang_count = 0;
    impl_->hung_collections.clear();
    ++impl_->hang_release_generation;
    impl_->duplicate = false;
  }
  impl_->changed.notify_all();
}

uint64_t FakeApiServer::lists_served() const { return impl_->lists.load(); }
uint64_t FakeApiServer::watches_served() const { return impl_->watches.load(); }
uint64_t FakeApiServer::watch_lists_served() const { return impl_->watch_lists.load(); }

json MakeGpuNode(const std::string& name, int gpus, const std::string& product) {
  std::string count = std::to_string(gpus);
  return json{{"metadata",
               {{"name", name},
                {"uid", "node-uid-" + name},
                {"labels",
                 {{"kubernetes.io/hostname", name},
                  {"nvidia.com/gpu.product", product},
                  {"nvidia.com/gpu.count", count},
                  {"nvidia.com/gpu.memory", "81920"},
                  {"nvidia.com/gpu.family", "ampere"},
                  {"nvidia.com/mig.strategy", "single"}}}}},
              {"spec", json::object()},
              {"status",
               {{"capacity", {{"cpu", "96"}, {"memory", "1Ti"}, {"nvidia.com/gpu", count}}},
                {"allocatable", {{"cpu", "96"}, {"memory", "1Ti"}, {"nvidia.com/gpu", count}}}}}};
}

json MakeGpuPod(const std::string& ns, const std::string& name, const std::string& uid,
                const std::string& node, int gpus, const std::string& phase) {
  json resources = {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}},
                    {"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}};
  json spec = {
      {"containers", json::array({{{"name", "main"}, {"image", "x"}, {"resources", resources}}})}};
  if (!node.empty()) spec["nodeName"] = node;
  return json{{"metadata", {{"name", name}, {"namespace", ns}, {"uid", uid}}},
              {"spec", spec},
              {"status", {{"phase", phase}}}};
}

}  // namespace gpusched::testing
