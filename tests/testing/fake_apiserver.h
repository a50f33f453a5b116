// FakeApiServer: an in-process Kubernetes API server for nodes and pods (and any other namespaced
// collection a test writes to), on 127.0.0.1, that speaks
// the real protocol the reflectors use: paged LIST (limit/continue, snapshot-consistent pages,
// list resourceVersion), WATCH from a resourceVersion as a chunked stream of newline-delimited
// events, the watch-list (sendInitialEvents=true: every object as an ADDED event, then a BOOKMARK
// annotated k8s.io/initial-events-end, then the watch), BOOKMARK events, "410 Gone" for versions
// older than the last compaction (as an ERROR event or as an HTTP status), and bearer-token checks.
//
// Faults can be injected: failing the next requests with a status (401/403/429/500/503), slow and
// hung responses, duplicate events, a watch connection dropped in the middle of an event, every
// watch closed, and compaction of the history. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusched::testing {

// Serve HTTPS with this certificate and key; with `client_ca_file`, require and verify a client
// certificate signed by that CA.
struct FakeApiServerTls {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
};

class FakeApiServer {
 public:
  // Starts listening on 127.0.0.1:`port` (0: any free port), plain HTTP or HTTPS.
  explicit FakeApiServer(int port = 0, const FakeApiServerTls* tls = nullptr);
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const;
  // Writes a kubeconfig for this server (bearer token `token`) to `path`.
  void WriteKubeconfig(const std::string& path) const;

  // Objects. Each change bumps the resourceVersion and records a watch event. Pods are keyed by
  // namespace/name and must carry metadata.uid.
  void UpsertNode(nlohmann::json node);
  void DeleteNode(const std::string& name);
  void UpsertPod(nlohmann::json pod);
  void DeletePod(const std::string& ns, const std::string& name);
  // Namespaced objects of any other collection under /apis/ (such as "/apis/batch/v1/jobs"),
  // listed and watched as pods are. A collection nothing was ever written to answers 404, as a
  // resource the server does not serve, and is left out of the injected faults.
  void UpsertObject(const std::string& collection, nlohmann::json object);
  void DeleteObject(const std::string& collection, const std::string& ns, const std::string& name);
  std::vector<nlohmann::json> Nodes() const;
  std::vector<nlohmann::json> Pods() const;
  int64_t resource_version() const;

  // Writes through the API, as a controller makes them: GET, POST (201; 409 when the name is
  // taken; a uid is given when the object has none), PATCH (a merge of metadata.labels and
  // annotations) and DELETE (honouring preconditions.uid) of
  // namespaced pods, and GET, POST and PUT (409 unless metadata.resourceVersion is the current one)
  // of coordination.k8s.io/v1 Leases.
  std::optional<nlohmann::json> Lease(const std::string& ns, const std::string& name) const;
  uint64_t writes_served() const;  // POST, PUT and DELETE answered 2xx

  // Faults.
  void RequireToken(std::string token);  // requests without "Bearer <token>" get 401
  void FailNextRequests(int count, int status);
  void SetDelay(std::chrono::milliseconds delay);
  void HangNextRequests(int count);  // held until ReleaseHangs() or 30 s
  // Every request to the other collection `collection` (UpsertObject) held until ReleaseHangs()
  // or 30 s.
  void HangCollection(const std::string& collection);
  void ReleaseHangs();
  void SetDuplicateEvents(bool on);
  void DropWatchesMidEvent();  // each open watch writes half of its next event and disconnects
  void CloseWatches();         // each open watch ends cleanly
  void Compact();              // forget the event history; older versions get 410
  void SetGoneAsHttpStatus(bool on);  // 410 as an HTTP status instead of an ERROR event
  void SetBookmarkInterval(std::chrono::milliseconds interval);
  // Every watch answers 200 with `body` at once and ends (an ERROR event, an unknown type, "",
  // bytes that are no JSON); nullopt serves watches again.
  void SetWatchAnswer(std::optional<std::string> body);
  // How a watch-list (sendInitialEvents=true) is answered: streamed, its initial events ended by
  // an annotated BOOKMARK (kStreamed, as kube-apiserver 1.34 over etcd 3.5); one ERROR event with
  // code 500 (kErrorEvent, as kube-apiserver over an etcd without progress notifications);
  // 422 Invalid (kInvalid, as a server with the WatchList feature off); the objects streamed
  // and never that bookmark (kIgnored, as a server too old to know the parameter).
  enum class WatchListAnswer { kStreamed, kErrorEvent, kInvalid, kIgnored };
  void SetWatchListAnswer(WatchListAnswer answer);
  // Every list page carries a continue token, so no list ever ends.
  void SetEndlessLists(bool on);
  void ClearFaults();

  uint64_t lists_served() const;
  uint64_t watches_served() const;  // watch-lists included
  uint64_t watch_lists_served() const;

  static const std::string kToken;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  bool https_ = false;
  std::thread thread_;
};

// Node and pod objects shaped like the API server's, for tests and benchmarks.
nlohmann::json MakeGpuNode(const std::string& name, int gpus,
                           const std::string& product = "NVIDIA-A100-SXM4-80GB");
nlohmann::json MakeGpuPod(const std::string& ns, const std::string& name, const std::string& uid,
                          const std::string& node, int gpus, const std::string& phase = "Running");

}  // namespace gpusched::testing
