#include "gpusched/app/server_app.h"

#include <spdlog/spdlog.h>

#include "gpusched/app/process_setup.h"
#include "gpusched/metrics/cluster_series.h"
#include "gpusched/policy/policy_watcher.h"

namespace gpusched {
namespace {

// The options with the app's memory release after bursts of large requests, unless they name
// their own.
ServerAppOptions WithMemoryRelease(ServerAppOptions o) {
  if (!o.server.after_large_requests) o.server.after_large_requests = ReleaseFreeMemory;
  for (auto* side : {&o.ops, &o.reports, &o.webhook}) {
    if (*side && !(*side)->after_large_requests) (*side)->after_large_requests = ReleaseFreeMemory;
  }
  return o;
}

// The policy in force and its reloads: the policy layer knows no metrics, so the server, which
// publishes the policy and runs its watcher, writes them.
void WritePolicySeries(const Policy& policy, const PolicyWatcher* watcher, SeriesWriter& out) {
  auto reloads = out.Counter("gpusched_policy_reloads_total",
                             "Policy file reloads by result (failed: the last good policy stayed)");
  reloads.Add({{"result", "ok"}}, watcher ? static_cast<double>(watcher->reloads()) : 0);
  reloads.Add({{"result", "failed"}}, watcher ? static_cast<double>(watcher->failures()) : 0);
  out.Gauge("gpusched_policy_info", "Always 1; the digest label identifies the policy in force")
      .Add({{"digest", policy.digest()}}, 1);
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
      service_(inventory_->snapshots(), policies_, options_.count_decisions ? &metrics_ : nullptr,
               inventory_->assumptions()),
      server_(
          options_.server, service_, [this] { return inventory_->readiness(); }, &metrics_) {
  // Each part that holds state writes its own series; registered in the exposition's order.
  metrics_.AddCollector([this](SeriesWriter& out) { inventory_->WriteSeries(out); });
  metrics_.AddCollector(
      [this](SeriesWriter& out) { WritePolicySeries(*policies_.Get(), watcher_.get(), out); });
  auto readiness = [this] { return inventory_->readiness(); };
  if (options_.ops) {
    ops_.server = std::make_unique<HttpServer>(*options_.ops, service_, readiness, &metrics_);
  }
  if (options_.reports) {
    reports_.server = std::make_unique<HttpServer>(*options_.reports, service_, readiness);
  }
  // The reports go to their own listener when there is one, else to the ops listener; never to
  // the verbs' port.
  HttpServer* reports = reports_.server ? reports_.server.get() : ops_.server.get();
  if (reports) {
    ReportsWorkerOptions worker_options;
    worker_options.min_interval = options_.report_interval;
    worker_options.description = inventory_->description();
    reports_worker_ = std::make_unique<ReportsWorker>(
        inventory_->snapshots(), policies_, [this] { return inventory_->readiness().ready; },
        std::move(worker_options));
    reports->AddGetRoute("/capacity", [this] { return reports_worker_->ServeCapacity(); });
    reports->AddGetRoute("/why-pending", [this] { return reports_worker_->ServeWhyPending(); });
    metrics_.AddCollector([this](SeriesWriter& out) { reports_worker_->WriteSeries(out); });
  }
  metrics_.AddCollector([this](SeriesWriter& out) {
    if (auto snapshot = inventory_->snapshots().Get()) WriteClusterSeries(*snapshot, out);
  });
  if (options_.webhook) AddWebhook();
}

void ServerApp::AddWebhook() {
  webhook_.server = std::make_unique<HttpServer>(*options_.webhook, service_,
                                                 [this] { return inventory_->readiness(); });
  mutator_ = std::make_unique<PodMutator>(inventory_->snapshots(), policies_);
  webhook_.server->AddPostRoute(
      std::string(kMutatePodsPath), [this](std::string&& body, std::string_view peer) {
        PodMutator::Answer a = mutator_->Review(body);
        const Mutation& m = a.mutation;
        if (m.result == MutationResult::kPatched) {
          spdlog::info("admission: pod {}: node affinity added: {}", a.pod, m.annotation);
        } else if (m.result == MutationResult::kBadRequest) {
          spdlog::warn("admission: unreadable review from {} answered unpatched: {}", peer,
                       m.annotation);
        } else if (m.result != MutationResult::kNotGpuPod &&
                   m.result != MutationResult::kNotAPodCreate) {
          spdlog::debug("admission: pod {}: {}{}{}", a.pod, ToString(m.result),
                        m.annotation.empty() ? "" : ": ", m.annotation);
        }
        return HttpResponse{a.status, "application/json", std::move(a.body), ""};
      });
  metrics_.AddCollector([this](SeriesWriter& out) { mutator_->WriteSeries(out); });
}

ServerApp::~ServerApp() {
  Stop();
  ops_.Join();
  reports_.Join();
  webhook_.Join();
  reports_worker_.reset();  // before the inventory and policies it reads
}

void ServerApp::SideListener::Bind() {
  if (!server) return;
  port = server->Bind();
  thread = std::thread([this] { server->Run(); });
}

void ServerApp::SideListener::Stop() {
  if (server) server->Stop();
}

void ServerApp::SideListener::Join() {
  if (thread.joinable()) thread.join();
}

int ServerApp::Bind() {
  int port = server_.Bind();
  ops_.Bind();
  reports_.Bind();
  webhook_.Bind();
  return port;
}

void ServerApp::Run() {
  server_.Run();
  // The verbs' listener failed or was stopped: the process is ending.
  ops_.Stop();
  reports_.Stop();
  webhook_.Stop();
}

void ServerApp::Stop() {
  server_.Stop();
  ops_.Stop();
  reports_.Stop();
  webhook_.Stop();
}

}  // namespace gpusched
