#include "gpusched/app/server_app.h"

#include "gpusched/app/process_setup.h"
#include "gpusched/policy/policy_watcher.h"

namespace gpusched {
namespace {

// The options with the app's memory release after bursts of large requests, unless they name
// their own.
ServerAppOptions WithMemoryRelease(ServerAppOptions o) {
  if (!o.server.after_large_requests) o.server.after_large_requests = ReleaseFreeMemory;
  if (o.ops && !o.ops->after_large_requests) o.ops->after_large_requests = ReleaseFreeMemory;
  return o;
}

}  // namespace

ServerApp::ServerApp(ServerAppOptions options, std::shared_ptr<const Policy> policy,
                     std::unique_ptr<InventorySource> inventory)
    : options_(WithMemoryRelease(std::move(options))),
      inventory_(std::move(inventory)),
      policies_(std::move(policy)),
      watcher_(options_.policy_path.empty()
                   ? nullptr
                   : std::make_unique<PolicyWatcher>(options_.policy_path, policies_,
                                                     options_.policy_reload_interval)),
      metrics_([this] { return CurrentMetrics(); }),
      service_(inventory_->snapshots(), policies_, options_.count_decisions ? &metrics_ : nullptr,
               inventory_->assumptions()),
      server_(
          options_.server, service_, [this] { return inventory_->readiness(); }, &metrics_) {
  if (options_.ops) {
    ops_ = std::make_unique<HttpServer>(
        *options_.ops, service_, [this] { return inventory_->readiness(); }, &metrics_);
    CapacityWorkerOptions capacity_options;
    capacity_options.min_interval = options_.capacity_interval;
    capacity_options.description = inventory_->description();
    capacity_ = std::make_unique<CapacityWorker>(
        inventory_->snapshots(), policies_, [this] { return inventory_->readiness().ready; },
        std::move(capacity_options));
    // Only the ops listener: the verbs' port never serves it.
    ops_->AddGetRoute("/capacity", [this] { return capacity_->Serve(); });
    ops_->AddGetRoute("/why-pending", [this] { return capacity_->ServeWhyPending(); });
  }
}

ServerApp::~ServerApp() {
  Stop();
  if (ops_thread_.joinable()) ops_thread_.join();
  capacity_.reset();  // before the inventory and policies it reads
}

int ServerApp::Bind() {
  int port = server_.Bind();
  if (ops_) {
    ops_port_ = ops_->Bind();
    ops_thread_ = std::thread([this] { ops_->Run(); });
  }
  return port;
}

void ServerApp::Run() {
  server_.Run();
  if (ops_) ops_->Stop();  // the verbs' listener failed or was stopped: the process is ending
}

void ServerApp::Stop() {
  server_.Stop();
  if (ops_) ops_->Stop();
}

MetricsState ServerApp::CurrentMetrics() const {
  MetricsState m;
  m.snapshot = inventory_->snapshots().Get();
  inventory_->ReportMetrics(m);
  m.policy_digest = policies_.Get()->digest();
  if (capacity_) capacity_->Report(m);
  if (watcher_) {
    m.policy_reloads_ok = watcher_->reloads();
    m.policy_reloads_failed = watcher_->failures();
  }
  return m;
}

}  // namespace gpusched
