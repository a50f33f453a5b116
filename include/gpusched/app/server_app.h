// ServerApp: the extender service as `gpusched serve` runs it, assembled in one place for the
// binary, the tests and the benchmarks: a published policy (reloaded from its file when one is
// named), an inventory source, Prometheus metrics over both, the extender service, and the HTTP
// listeners: the verbs with probes and /metrics; optionally a plain ops listener for probes and
// /metrics (and the reports, /capacity and /why-pending, unless a reports listener of their own
// takes them), and an HTTPS listener for the mutating admission webhook. Its listeners give free
// heap back after a burst of large requests (ReleaseFreeMemory, app/process_setup.h) unless their
// options name another `after_large_requests`; the process-wide settings are the caller's
// (SetUpServingProcess, before any thread starts).
//
// Life cycle: construct (nothing listens), Bind() (ports taken; throws on failure), Run() on one
// thread (blocks until Stop()), Stop() from any thread, including a signal-handling one. The
// destructor stops and joins what is still running.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "gpusched/admission/pod_mutator.h"
#include "gpusched/app/inventory_source.h"
#include "gpusched/app/reports_worker.h"
#include "gpusched/extender/extender_service.h"
#include "gpusched/metrics/metrics.h"
#include "gpusched/policy/policy.h"
#include "gpusched/server/http_server.h"
#include "gpusched/util/published.h"

namespace gpusched {

class PolicyWatcher;  // policy/policy_watcher.h

// The webhook listener's route, named in manifests/webhook/.
inline constexpr std::string_view kMutatePodsPath = "/mutate-pods";

struct ServerAppOptions {
  ServerOptions server;              // the verbs' listener; port 0 takes any free port
  std::optional<ServerOptions> ops;  // plain HTTP for probes and /metrics (serve_verbs false)
  // Plain HTTP for /capacity and /why-pending (serve_verbs false), which name the cluster's pods
  // and namespaces: a port of their own that a NetworkPolicy can close to everyone the probes and
  // Prometheus need not be. Without it the reports are on the ops listener.
  std::optional<ServerOptions> reports;
  // HTTPS for the mutating admission webhook (POST /mutate-pods, admission/pod_mutator.h),
  // serve_verbs false: the API server calls it, never kube-scheduler.
  std::optional<ServerOptions> webhook;
  std::string policy_path;  // reloaded when it changes; empty: the policy never changes
  std::chrono::seconds policy_reload_interval{2};
  bool count_decisions = true;  // false: the service counts nothing in the metrics
  // With an ops or reports listener: GET /capacity and /why-pending there and the
  // gpusched_capacity_* gauges, from reports computed in the background at most once per this
  // interval (ReportsWorker).
  std::chrono::milliseconds report_interval = kReportInterval;
};

class ServerApp {
 public:
  // Serves `policy` (the content of options.policy_path when that is set) over `inventory`.
  ServerApp(ServerAppOptions options, std::shared_ptr<const Policy> policy,
            std::unique_ptr<InventorySource> inventory);
  ~ServerApp();
  ServerApp(const ServerApp&) = delete;
  ServerApp& operator=(const ServerApp&) = delete;

  // Takes the listeners' ports and returns the verbs' port; the ops listener, if any, starts
  // serving on its own thread. Throws InputError (port in use, unreadable TLS files).
  int Bind();
  // The ops listener's port after Bind(); 0 without one.
  int ops_port() const { return ops_.port; }
  // The reports listener's port after Bind(); 0 without one.
  int reports_port() const { return reports_.port; }
  // The webhook listener's port after Bind(); 0 without one.
  int webhook_port() const { return webhook_.port; }
  // Serves the verbs on this thread until Stop(); also returns when the listener fails.
  void Run();
  // Makes Run() return and stops the other listeners; safe from any thread.
  void Stop();

  const ExtenderService& service() const { return service_; }
  Metrics& metrics() { return metrics_; }
  Published<Policy>& policies() { return policies_; }
  const InventorySource& inventory() const { return *inventory_; }
  // Open connections of the verbs' listener (for the benchmarks).
  size_t connection_count() const { return server_.connection_count(); }
  // The background capacity reports; null without an ops or reports listener.
  const ReportsWorker* reports_worker() const { return reports_worker_.get(); }

 private:
  ServerAppOptions options_;
  std::unique_ptr<InventorySource> inventory_;
  Published<Policy> policies_;
  std::unique_ptr<PolicyWatcher> watcher_;  // null without a policy file
  Metrics metrics_;
  ExtenderService service_;
  HttpServer server_;
  // A listener beside the verbs', serving on a thread of its own once bound.
  struct SideListener {
    std::unique_ptr<HttpServer> server;  // null when not configured
    int port = 0;
    std::thread thread;
    void Bind();
    void Stop();
    void Join();
  };

  // Serves the admission webhook on webhook_ (constructor, with options_.webhook only).
  void AddWebhook();

  SideListener ops_;
  SideListener reports_;
  SideListener webhook_;
  std::unique_ptr<PodMutator> mutator_;            // with webhook_ only
  std::unique_ptr<ReportsWorker> reports_worker_;  // with ops_ or reports_ only
};

}  // namespace gpusched
