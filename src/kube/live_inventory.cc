// Longer than 500 lines: the sink of every kind the live inventory watches (nodes, pods, DRA
// objects, group sizes) changes its one ledger under its lock, beside the publisher.
#include "gpusched/kube/live_inventory.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <string_view>

#include <spdlog/spdlog.h>

#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/k8s_dra_decode.h"
#include "gpusched/codec/k8s_group_decode.h"
#include "gpusched/dra/dra_claims.h"
#include "gpusched/kube/refusal_counts.h"

namespace gpusched {

template <class F>
void LiveInventory::Change(F&& change) {
  std::lock_guard lock(ledger_mu_);
  change(ledger_);
  dirty_ = true;
}

template <class F>
void LiveInventory::ChangeIf(F&& change) {
  std::lock_guard lock(ledger_mu_);
  if (change(ledger_)) dirty_ = true;
}

// Counts the objects decoded with resources past the decoder's budget (codec/k8s_decode.h).
class LiveInventory::SummaryCount {
 public:
  template <class Info>
  Info Counted(Info info) {
    if (info.resources_not_kept > 0) summarised_.fetch_add(1);
    return info;
  }
  uint64_t summarised() const { return summarised_.load(); }

 private:
  std::atomic<uint64_t> summarised_{0};
};

class LiveInventory::NodeSink : public ReflectorSink, public SummaryCount {
 public:
  explicit NodeSink(LiveInventory& owner) : owner_(owner) {}
  void BeginList() override { listed_.clear(); }
  void AddListed(simdjson::ondemand::object o) override { listed_.push_back(Decode(o)); }
  void EndList() override {
    owner_.Change([&](ClusterLedger& ledger) {
      ledger.ReplaceNodes(std::move(listed_));
      owner_.nodes_listed_ = true;
    });
    listed_ = {};  // its capacity too: a list is rare, and it held every object
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    // A deletion needs the name only, so a node that cannot be decoded still leaves.
    if (type == "DELETED") {
      std::string name = DecodeIdentity(o).name;
      owner_.Change([&](ClusterLedger& ledger) { ledger.DeleteNode(name); });
      return;
    }
    NodeInfo node = Decode(o);
    owner_.Change([&](ClusterLedger& ledger) { ledger.UpsertNode(std::move(node)); });
  }

 private:
  NodeInfo Decode(simdjson::ondemand::object o) {
    NodeInfo node = Counted(DecodeNode(o));
    node.pin_labels = pin_labels_.Share(std::move(node.pin_labels));
    return node;
  }
  LiveInventory& owner_;
  std::vector<NodeInfo> listed_;
  PinLabelPool pin_labels_;
};

class LiveInventory::PodSink : public ReflectorSink, public SummaryCount {
 public:
  explicit PodSink(LiveInventory& owner) : owner_(owner) {}
  void BeginList() override { listed_.clear(); }
  void AddListed(simdjson::ondemand::object o) override {
    PodInfo pod = Counted(DecodePod(o));
    // What the ledger keeps (GPU pods, and other pods while bound), slimmed to what it reads.
    bool holds = !pod.node_name.empty() && !pod.terminal();
    // Pods with DRA claims too: the ledger reads their GPU requests from the claims.
    if (holds || !GpuDemand(pod, owner_.gpu_names_).empty() || HasOwnClaims(pod)) {
      listed_.push_back(Slim(std::move(pod), owner_.gpu_names_));
    }
  }
  void EndList() override {
    owner_.Change([&](ClusterLedger& ledger) {
      ledger.ReplacePods(std::move(listed_));
      owner_.pods_listed_ = true;
    });
    listed_ = {};  // its capacity too: a list is rare, and it held every object
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    // A deletion needs the identity only, so a pod that cannot be decoded still releases.
    if (type == "DELETED") {
      std::string key = PodKey(DecodeIdentity(o));
      owner_.Change([&](ClusterLedger& ledger) { ledger.DeletePod(key); });
      return;
    }
    PodInfo pod = Counted(DecodePod(o));
    pod.requests = KeptRequests(pod.requests, owner_.gpu_names_);
    owner_.Change([&](ClusterLedger& ledger) { ledger.UpsertPod(pod); });
  }

 private:
  // A list of 150,000 pods is held until it is applied: each keeps only what the ledger reads.
  // GPU pods, far fewer, keep their labels and gpusched.io/ annotations, as a watched pod does:
  // planning judges them with the engine (annotations) and matches disruption budgets (labels).
  static PodInfo Slim(PodInfo pod, const GpuResourceNames& gpu_names) {
    pod.requests = KeptRequests(pod.requests, gpu_names);
    if (GpuDemand(pod, gpu_names).empty() && !HasOwnClaims(pod)) {
      pod.labels = {};
      pod.annotations = {};
    }
    pod.resource_version = {};
    pod.max_container_requests = {};
    return pod;
  }
  // The requests the ledger and planning read (cpu, memory, GPU resources), listed or watched:
  // other names are not kept per name.
  static ResourceList KeptRequests(const ResourceList& requests,
                                   const GpuResourceNames& gpu_names) {
    return requests.Filtered([&](std::string_view name) {
      return name == "cpu" || name == "memory" || gpu_names.IsGpuResource(name);
    });
  }
  LiveInventory& owner_;
  std::deque<PodInfo> listed_;  // a deque: no regrowth copies, consumed as it is applied
};

namespace {

// One of the ledger's refusals (DraLedger::Refusals), under its reason in metrics.
struct DraRefusal {
  const char* reason;
  uint64_t DraLedger::Refusals::*count;
  const char* why;
};
constexpr DraRefusal kSliceRefusals[] = {
    {"dra_slice_cap", &DraLedger::Refusals::slices, "the ledger keeps no more slices"},
    {"dra_kind_cap", &DraLedger::Refusals::kinds,
     "the nodes offer more kinds of devices than gpusched tells apart"}};
constexpr DraRefusal kClaimRefusals[] = {
    {"dra_claim_cap", &DraLedger::Refusals::claims, "the ledger keeps no more claims"},
    {"dra_claim_bytes", &DraLedger::Refusals::claim_bytes,
     "the claim is kept without its requests: too large, or the claims' byte budget is spent"}};
constexpr DraRefusal kClassRefusals[] = {
    {"dra_class_cap", &DraLedger::Refusals::classes, "the ledger keeps no more classes"}};

}  // namespace

// One DRA kind's objects into the ledger's DraLedger (dra/dra_ledger.h); what the ledger
// refuses of this kind is counted (refused()) and logged once per reason. A list is kept in the
// ledger's forms as it is decoded (slices compacted, claims compiled and bounded by bytes), never
// whole as decoded.
class LiveInventory::DraSink : public ReflectorSink {
 public:
  enum class Kind { kSlices, kClaims, kClasses };
  DraSink(LiveInventory& owner, Kind kind, const char* path,
          std::shared_ptr<DraKindInterner> interner)
      : owner_(owner),
        kind_(kind),
        refusals_(kind == Kind::kSlices   ? std::span<const DraRefusal>(kSliceRefusals)
                  : kind == Kind::kClaims ? std::span<const DraRefusal>(kClaimRefusals)
                                          : std::span<const DraRefusal>(kClassRefusals)),
        refused_(path, {refusals_[0].reason, refusals_.back().reason}),
        interner_(std::move(interner)) {}
  void BeginList() override { Clear(); }
  void AddListed(simdjson::ondemand::object o) override {
    switch (kind_) {
      case Kind::kSlices:
        slices_.push_back(StoreSlice(DecodeDraSlice(o), *interner_));
        break;
      case Kind::kClaims: {
        // The list's claims replace the ledger's: the budget is the list's own.
        size_t left =
            listed_bytes_ >= kMaxDraClaimBytesTotal ? 0 : kMaxDraClaimBytesTotal - listed_bytes_;
        auto entry = DraClaimEntry::Make(DecodeDraClaim(o), left);
        listed_bytes_ += entry->bytes;
        claims_.push_back(std::move(entry));
        break;
      }
      case Kind::kClasses:
        classes_.push_back(DecodeDraDeviceClass(o));
        break;
    }
  }
  void EndList() override {
    Change("a listed object", [&](DraLedger& dra) {
      switch (kind_) {
        case Kind::kSlices:
          dra.ReplaceSlices(std::move(slices_));
          break;
        case Kind::kClaims:
          dra.ReplaceClaims(std::move(claims_));
          break;
        case Kind::kClasses:
          dra.ReplaceClasses(std::move(classes_));
          break;
      }
    });
    Clear();
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    if (type == "DELETED") {
      PodInfo id = DecodeIdentity(o);  // name and namespace: what a deletion needs
      owner_.Change([&](ClusterLedger& ledger) {
        switch (kind_) {
          case Kind::kSlices:
            ledger.dra().DeleteSlice(id.name);
            break;
          case Kind::kClaims:
            ledger.dra().DeleteClaim(id.namespace_name, id.name);
            break;
          case Kind::kClasses:
            ledger.dra().DeleteClass(id.name);
            break;
        }
      });
      return;
    }
    switch (kind_) {
      case Kind::kSlices: {
        DraStoredSlice slice = StoreSlice(DecodeDraSlice(o), *interner_);
        Change(slice.name, [&](DraLedger& dra) { dra.UpsertSlice(std::move(slice)); });
        break;
      }
      case Kind::kClaims: {
        DraClaim claim = DecodeDraClaim(o);
        Change(claim.namespace_name + "/" + claim.name,
               [&](DraLedger& dra) { dra.UpsertClaim(std::move(claim)); });
        break;
      }
      case Kind::kClasses: {
        DraDeviceClass c = DecodeDraDeviceClass(o);
        Change(c.name, [&](DraLedger& dra) { dra.UpsertClass(std::move(c)); });
        break;
      }
    }
  }
  // Objects the ledger refused past its cap on this kind, under the kind's cap reason.
  std::map<std::string_view, uint64_t> refused() const { return refused_.counts(); }
  // Counts what `dra` refused of this kind since last counted, naming `object` in the log (the
  // ledger_mu_ held). Kinds past their cap are found when the devices are counted, for a
  // snapshot: the publisher calls this after building one.
  void CountRefusals(const DraLedger& dra, std::string_view object) {
    const DraLedger::Refusals& r = dra.refused();
    for (size_t i = 0; i < refusals_.size(); ++i) {
      uint64_t now = r.*refusals_[i].count;
      if (now > counted_[i]) {
        refused_.Add(refusals_[i].reason, object, refusals_[i].why, now - counted_[i]);
        counted_[i] = now;
      }
    }
  }

 private:
  // Runs `change` on the ledger's DRA state, and counts what the ledger refused meanwhile, naming
  // `object` in the log (a copy: `change` may move the object it names).
  template <class F>
  void Change(std::string object, F&& change) {
    owner_.Change([&](ClusterLedger& ledger) {
      change(ledger.dra());
      CountRefusals(ledger.dra(), object);
    });
  }
  void Clear() {
    slices_ = {};
    claims_ = {};
    classes_ = {};
    listed_bytes_ = 0;
  }
  LiveInventory& owner_;
  Kind kind_;
  std::span<const DraRefusal> refusals_;
  RefusalCounts refused_;
  uint64_t counted_[2] = {0, 0};  // of the ledger's refusals, those in refused_ (ledger_mu_ held)
  std::shared_ptr<DraKindInterner> interner_;
  std::vector<DraStoredSlice> slices_;
  std::vector<std::shared_ptr<const DraClaimEntry>> claims_;
  size_t listed_bytes_ = 0;
  std::vector<DraDeviceClass> classes_;
};

// One kind of object stating pod group sizes into the ledger (ClusterLedger::SetStatedSizes).
class LiveInventory::GroupSizeSink : public ReflectorSink {
 public:
  GroupSizeSink(LiveInventory& owner, GroupSizeKind kind)
      : owner_(owner), kind_(kind), source_(GroupSourceOf(kind)) {}
  void BeginList() override { listed_.clear(); }
  void AddListed(simdjson::ondemand::object o) override {
    StatedGroupSizes sizes = Decode(o);
    // Most Jobs run one pod and state nothing: a list keeps only the objects that state a size.
    if (!sizes.sizes.empty()) listed_.push_back(std::move(sizes));
  }
  void EndList() override {
    owner_.ChangeIf([&](ClusterLedger& ledger) {
      return Counted(ledger.ReplaceStatedSizes(source_, std::move(listed_)));
    });
    listed_ = {};  // its capacity too: a list is rare
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    if (type == "DELETED") {
      PodInfo id = DecodeIdentity(o);  // name and namespace: what a deletion needs
      std::string object = id.namespace_name + "/" + id.name;
      owner_.ChangeIf([&](ClusterLedger& ledger) {
        return Counted(ledger.DeleteStatedSizes(source_, object));
      });
      return;
    }
    StatedGroupSizes sizes = Decode(o);
    // A Job's status changes with each of its pods: only a change of size makes a new snapshot.
    owner_.ChangeIf([&](ClusterLedger& ledger) {
      return Counted(ledger.SetStatedSizes(source_, std::move(sizes)));
    });
  }
  uint64_t ignored() const { return ignored_.load(); }

 private:
  StatedGroupSizes Decode(simdjson::ondemand::object o) {
    StatedGroupSizes sizes = DecodeStatedGroupSizes(kind_, o);
    ignored_.fetch_add(sizes.refused);
    return sizes;
  }
  bool Counted(ClusterLedger::StatedSizeChange change) {
    ignored_.fetch_add(change.dropped);
    return change.changed;
  }
  LiveInventory& owner_;
  GroupSizeKind kind_;
  std::string_view source_;
  std::vector<StatedGroupSizes> listed_;
  std::atomic<uint64_t> ignored_{0};  // sizes refused or dropped past the ledger's budget
};

namespace {

struct DraKind {
  const char* path;
  const char* name;  // in metrics
};
constexpr DraKind kDraKinds[] = {{"/apis/resource.k8s.io/v1/resourceslices", "resourceslice"},
                                 {"/apis/resource.k8s.io/v1/resourceclaims", "resourceclaim"},
                                 {"/apis/resource.k8s.io/v1/deviceclasses", "deviceclass"}};

struct GroupKind {
  const char* path;
  GroupSizeKind kind;
  const char* name;  // in metrics
};
constexpr GroupKind kGroupKinds[] = {
    {"/apis/batch/v1/jobs", GroupSizeKind::kJob, "job"},
    {"/apis/scheduling.k8s.io/v1alpha2/podgroups", GroupSizeKind::kPodGroup, "podgroup"},
    {"/apis/scheduling.k8s.io/v1alpha1/workloads", GroupSizeKind::kWorkload, "workload"},
    {"/apis/scheduling.volcano.sh/v1beta1/podgroups", GroupSizeKind::kVolcano, "volcano-podgroup"},
    {"/apis/scheduling.run.ai/v2alpha2/podgroups", GroupSizeKind::kKai, "kai-podgroup"},
    {"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", GroupSizeKind::kCoscheduling,
     "coscheduling-podgroup"}};

}  // namespace

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
  nodes_ = std::make_unique<Reflector>("/api/v1/nodes", config, *node_sink_, options_.reflector,
                                       options_.seed);
  pods_ = std::make_unique<Reflector>("/api/v1/pods", config, *pod_sink_, options_.reflector,
                                      options_.seed + 1);
  for (size_t i = 0; options_.dra && i < std::size(kDraKinds); ++i) {
    // (No thread runs yet: the ledger may be read without its lock.)
    dra_sinks_.push_back(std::make_unique<DraSink>(
        *this, static_cast<DraSink::Kind>(i), kDraKinds[i].path, ledger_.dra().kind_interner()));
    dra_.push_back(std::make_unique<Reflector>(kDraKinds[i].path, config, *dra_sinks_.back(),
                                               options_.reflector, options_.seed + 2 + i));
  }
  ReflectorOptions optional_kind = options_.reflector;
  optional_kind.quiet_repeated_failures = true;  // most clusters serve few of these kinds
  for (size_t i = 0; options_.group_sizes && i < std::size(kGroupKinds); ++i) {
    group_sinks_.push_back(std::make_unique<GroupSizeSink>(*this, kGroupKinds[i].kind));
    groups_.push_back(std::make_unique<Reflector>(kGroupKinds[i].path, config, *group_sinks_.back(),
                                                  optional_kind,
                                                  options_.seed + 2 + std::size(kDraKinds) + i));
  }
  // Last: the publisher reads the reflectors list (dra_), complete from now on. What the
  // reflectors applied meanwhile is in the ledger, marked dirty, and published on its first turn.
  publisher_.emplace(options_.publish_interval, [this] { PublishTurn(); });
}

LiveInventory::~LiveInventory() {
  // Both watches wind down at once: shutdown waits for one progress tick, not one per reflector.
  nodes_->RequestStop();
  pods_->RequestStop();
  for (auto& r : dra_) r->RequestStop();
  for (auto& r : groups_) r->RequestStop();
  nodes_->Stop();
  pods_->Stop();
  for (auto& r : dra_) r->Stop();
  for (auto& r : groups_) r->Stop();
  publisher_->Stop();
}

void LiveInventory::ApplyAssumptions(std::vector<PendingAssumption>& assumed,
                                     std::vector<PendingAssumption>& unknown) {
  auto now = std::chrono::steady_clock::now();
  std::vector<PendingAssumption> still_unknown;
  for (auto* batch : {&unknown, &assumed}) {  // the older first: their order is the requests'
    for (auto& a : *batch) {
      if (a.node.empty()) {
        if (ledger_.Forget(a.pod_key)) dirty_ = true;
        continue;
      }
      auto result = ledger_.Assume(a.pod_key, a.node, now, options_.assume_ttl);
      if (result == ClusterLedger::AssumeResult::kApplied) dirty_ = true;
      if (result == ClusterLedger::AssumeResult::kUnknownPod && now - a.queued < kUnknownPodGrace &&
          still_unknown.size() < kMaxPendingAssumptions) {
        still_unknown.push_back(std::move(a));
      }
    }
  }
  unknown.swap(still_unknown);
}

void LiveInventory::PublishTurn() {
  std::vector<PendingAssumption> assumed;
  {
    std::lock_guard lock(pending_mu_);
    assumed.swap(pending_);
  }
  std::unique_lock lock(ledger_mu_);
  ApplyAssumptions(assumed, unknown_);
  if (ledger_.ExpireAssumptions(std::chrono::steady_clock::now()) > 0) dirty_ = true;
  // The DRA lists too, once each has been tried: on a control plane that serves them, the first
  // complete snapshot (and the reports computed from it) counts the DRA GPUs. A list that failed
  // changed nothing, so completeness alone is reason enough to publish.
  bool complete =
      nodes_listed_ && pods_listed_ &&
      std::all_of(dra_.begin(), dra_.end(), [](const auto& r) { return r->attempted(); });
  if (!dirty_ && (complete_published_ || !complete)) return;
  dirty_ = false;
  auto snapshot = ledger_.BuildSnapshot();
  for (auto& sink : dra_sinks_) sink->CountRefusals(ledger_.dra(), "the devices of a snapshot");
  published_nodes_ = ledger_.node_count();
  published_pods_ = ledger_.gpu_pods_known();
  lock.unlock();
  out_.Set(std::move(snapshot));
  // Only now may requests be answered: the snapshot they read holds both initial lists.
  if (complete) complete_published_ = true;
}

InventoryStatus LiveInventory::Status() const {
  InventoryStatus s;
  auto now = std::chrono::steady_clock::now();
  auto oldest = std::min(nodes_->last_contact(), pods_->last_contact());
  s.age = now - oldest;
  s.nodes = published_nodes_.load();
  s.gpu_pods = published_pods_.load();
  auto seconds = [](std::chrono::steady_clock::duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
  };
  const Reflector* stuck = nullptr;
  for (const Reflector* r : {nodes_.get(), pods_.get()}) {
    if (r->synced() && now - r->last_progress() > options_.stale_after) stuck = r;
  }
  s.stale = stuck != nullptr;
  s.starting = !complete_published_.load();
  s.synced = !s.starting && !s.stale;
  if (stuck) {
    s.detail = "inventory stale: " + stuck->path() + " made no progress for " +
               seconds(now - stuck->last_progress()) + " (the list or watch keeps failing)";
  } else if (!complete_published_ && nodes_->synced() && pods_->synced()) {
    s.detail = "publishing the first complete snapshot";
  } else if (!complete_published_) {
    s.detail =
        std::string("waiting for the initial list of ") + (!nodes_->synced() ? "nodes" : "pods");
  } else {
    s.detail = "live inventory: " + std::to_string(s.nodes) + " nodes, " +
               std::to_string(s.gpu_pods) + " GPU pods known (any phase), last contact " +
               seconds(s.age) + " ago";
  }
  return s;
}

void LiveInventory::Queue(PendingAssumption a) {
  {
    std::lock_guard lock(pending_mu_);
    // A burst cannot grow the queue without bound while the publisher is busy building.
    if (pending_.size() >= kMaxPendingAssumptions) return;
    pending_.push_back(std::move(a));
  }
  publisher_->Wake();
}

void LiveInventory::Assume(const PodInfo& pod, std::string_view node) {
  if (options_.assume_ttl.count() <= 0 || node.empty()) return;
  Queue({PodKey(pod), std::string(node), std::chrono::steady_clock::now()});
}

void LiveInventory::Forget(const PodInfo& pod) {
  Queue({PodKey(pod), "", std::chrono::steady_clock::now()});
}

namespace {

// What `reflector` skipped, and `summarised` objects its sink kept in part.
LiveInventory::Skips SkipsOf(const Reflector& reflector, uint64_t summarised) {
  return {reflector.skipped_invalid(), reflector.skipped_malformed(), reflector.skipped_oversized(),
          summarised, reflector.skipped_refused()};
}

}  // namespace

LiveInventory::Skips LiveInventory::node_skips() const {
  return SkipsOf(*nodes_, node_sink_->summarised());
}

LiveInventory::Skips LiveInventory::pod_skips() const {
  return SkipsOf(*pods_, pod_sink_->summarised());
}

std::vector<std::pair<std::string_view, LiveInventory::Skips>> LiveInventory::dra_skips() const {
  std::vector<std::pair<std::string_view, Skips>> out;
  for (size_t i = 0; i < dra_.size(); ++i) {
    Skips skips = SkipsOf(*dra_[i], 0);
    for (const auto& [reason, n] : dra_sinks_[i]->refused()) skips.refused[reason] += n;
    out.emplace_back(kDraKinds[i].name, std::move(skips));
  }
  return out;
}

std::vector<std::pair<std::string_view, LiveInventory::Skips>> LiveInventory::group_skips() const {
  std::vector<std::pair<std::string_view, Skips>> out;
  for (size_t i = 0; i < groups_.size(); ++i) {
    out.emplace_back(kGroupKinds[i].name, SkipsOf(*groups_[i], group_sinks_[i]->ignored()));
  }
  return out;
}

uint64_t LiveInventory::lists_abandoned() const {
  return nodes_->lists_abandoned() + pods_->lists_abandoned();
}

uint64_t LiveInventory::lists() const { return nodes_->lists() + pods_->lists(); }
uint64_t LiveInventory::watch_lists() const { return nodes_->watch_lists() + pods_->watch_lists(); }
uint64_t LiveInventory::watch_restarts() const {
  return nodes_->watch_restarts() + pods_->watch_restarts();
}

}  // namespace gpusched
