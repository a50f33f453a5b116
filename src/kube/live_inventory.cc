#include "gpusched/kube/live_inventory.h"

#include <spdlog/spdlog.h>

#include "gpusched/codec/k8s_decode.h"

namespace gpusched {

class LiveInventory::NodeSink : public ReflectorSink {
 public:
  explicit NodeSink(LiveInventory& owner) : owner_(owner) {}
  void BeginList() override { listed_.clear(); }
  void AddListed(simdjson::ondemand::object o) override { listed_.push_back(DecodeNode(o)); }
  void EndList() override {
    std::lock_guard lock(owner_.ledger_mu_);
    owner_.ledger_.ReplaceNodes(std::move(listed_));
    listed_.clear();
    owner_.nodes_listed_ = true;
    owner_.MarkDirty();
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    NodeInfo node = DecodeNode(o);
    std::lock_guard lock(owner_.ledger_mu_);
    if (type == "DELETED") {
      owner_.ledger_.DeleteNode(node.name);
    } else {
      owner_.ledger_.UpsertNode(std::move(node));
    }
    owner_.MarkDirty();
  }

 private:
  LiveInventory& owner_;
  std::vector<NodeInfo> listed_;
};

class LiveInventory::PodSink : public ReflectorSink {
 public:
  explicit PodSink(LiveInventory& owner) : owner_(owner) {}
  void BeginList() override { listed_.clear(); }
  void AddListed(simdjson::ondemand::object o) override {
    PodInfo pod = DecodePod(o);
    // Only GPU pods are kept, so a list of 150,000 pods costs memory for the GPU ones alone.
    if (!GpuDemand(pod, owner_.gpu_names_).empty()) listed_.push_back(Slim(std::move(pod)));
  }
  void EndList() override {
    std::lock_guard lock(owner_.ledger_mu_);
    owner_.ledger_.ReplacePods(listed_);
    listed_.clear();
    owner_.pods_listed_ = true;
    owner_.MarkDirty();
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    PodInfo pod = DecodePod(o);
    std::lock_guard lock(owner_.ledger_mu_);
    if (type == "DELETED") {
      owner_.ledger_.DeletePod(ClusterLedger::PodKey(pod));
    } else {
      owner_.ledger_.UpsertPod(pod);
    }
    owner_.MarkDirty();
  }

 private:
  static PodInfo Slim(PodInfo pod) {
    pod.labels.clear();
    pod.annotations.clear();
    return pod;
  }
  LiveInventory& owner_;
  std::vector<PodInfo> listed_;
};

LiveInventory::LiveInventory(const KubeConfig& config, GpuResourceNames gpu_names,
                             Published<ClusterSnapshot>& out, LiveInventoryOptions options)
    : gpu_names_(gpu_names),
      out_(out),
      options_(options),
      ledger_(std::move(gpu_names), options.workload_half_life) {
  if (!out_.Get())
    out_.Set(std::make_shared<const ClusterSnapshot>(std::vector<ClusterSnapshot::NodePtr>{}, 0));
  node_sink_ = std::make_unique<NodeSink>(*this);
  pod_sink_ = std::make_unique<PodSink>(*this);
  publisher_ = std::thread([this] { PublishLoop(); });
  nodes_ = std::make_unique<Reflector>("/api/v1/nodes", config, *node_sink_, options_.reflector,
                                       options_.seed);
  pods_ = std::make_unique<Reflector>("/api/v1/pods", config, *pod_sink_, options_.reflector,
                                      options_.seed + 1);
}

LiveInventory::~LiveInventory() {
  // Both watches wind down at once: shutdown waits for one progress tick, not one per reflector.
  nodes_->RequestStop();
  pods_->RequestStop();
  nodes_->Stop();
  pods_->Stop();
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  publisher_.join();
}

void LiveInventory::MarkDirty() {
  dirty_ = true;  // ledger_mu_ is held by the caller
}

void LiveInventory::PublishLoop() {
  for (;;) {
    std::vector<PendingAssumption> assumed;
    {
      std::unique_lock wake(wake_mu_);
      wake_.wait_for(wake, options_.publish_interval,
                     [this] { return stop_ || !pending_.empty(); });
      if (stop_) return;
      assumed.swap(pending_);
    }
    std::unique_lock lock(ledger_mu_);
    for (const auto& a : assumed) {
      if (ledger_.Assume(a.pod, a.node, a.expires)) dirty_ = true;
    }
    if (ledger_.ExpireAssumptions(std::chrono::steady_clock::now()) > 0) dirty_ = true;
    if (!dirty_) continue;
    dirty_ = false;
    bool complete = nodes_listed_ && pods_listed_;
    auto snapshot = ledger_.BuildSnapshot();
    published_nodes_ = ledger_.node_count();
    published_pods_ = ledger_.gpu_pods_known();
    lock.unlock();
    out_.Set(std::move(snapshot));
    // Only now may requests be answered: the snapshot they read holds both initial lists.
    if (complete) complete_published_ = true;
  }
}

InventoryStatus LiveInventory::Status() const {
  InventoryStatus s;
  s.synced = complete_published_.load();
  auto oldest = std::min(nodes_->last_contact(), pods_->last_contact());
  s.age = std::chrono::steady_clock::now() - oldest;
  s.nodes = published_nodes_.load();
  s.gpu_pods = published_pods_.load();
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(s.age).count();
  if (!s.synced && nodes_->synced() && pods_->synced()) {
    s.detail = "publishing the first complete snapshot";
  } else if (!s.synced) {
    s.detail =
        std::string("waiting for the initial list of ") + (!nodes_->synced() ? "nodes" : "pods");
  } else {
    s.detail = "live inventory: " + std::to_string(s.nodes) + " nodes, " +
               std::to_string(s.gpu_pods) + " GPU pods known (any phase), last contact " +
               std::to_string(seconds) + "s ago";
  }
  return s;
}

void LiveInventory::Assume(const PodInfo& pod, std::string_view node) {
  if (options_.assume_ttl.count() <= 0) return;
  PendingAssumption a;
  a.pod.name = pod.name;
  a.pod.namespace_name = pod.namespace_name;
  a.pod.uid = pod.uid;
  a.pod.requests = pod.requests;
  a.pod.gpu_product_selector = pod.gpu_product_selector;
  a.node = std::string(node);
  a.expires = std::chrono::steady_clock::now() + options_.assume_ttl;
  {
    std::lock_guard lock(wake_mu_);
    // A burst cannot grow the queue without bound while the publisher is busy building.
    if (pending_.size() >= kMaxPendingAssumptions) return;
    pending_.push_back(std::move(a));
  }
  wake_.notify_all();
}

uint64_t LiveInventory::lists() const { return nodes_->lists() + pods_->lists(); }
uint64_t LiveInventory::watch_restarts() const {
  return nodes_->watch_restarts() + pods_->watch_restarts();
}

}  // namespace gpusched
