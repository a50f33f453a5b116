// Longer than 500 lines: every kind the live inventory watches (nodes, pods, DRA objects, group
// sizes), each applied by the one generic sink to its one ledger under its lock, beside the
// publisher.
#include "gpusched/kube/live_inventory.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

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

// One kind of object the live inventory watches, applied to its ledger (ledger_mu_ held). A kind
// says how a listed object joins the list that replaces the ledger's objects of the kind (only
// what the ledger keeps, in the form it keeps it), how a watched object is decoded, and how the
// ledger takes a list, an object and a deletion, each answering whether the ledger changed:
//   using Listed = ...;                                   what a list is collected in
//   void List(Listed&, simdjson::ondemand::object);
//   Object Decode(simdjson::ondemand::object);
//   bool Replace(ClusterLedger&, Listed&&);
//   bool Upsert(ClusterLedger&, Object);
//   bool Delete(ClusterLedger&, const PodInfo& identity);  name and namespace only
// The kinds: NodeObjects, PodObjects, SliceObjects, ClaimObjects, ClassObjects, GroupSizeObjects.
template <class Kind>
class LiveInventory::KindSink final : public ReflectorSink {
 public:
  template <class... Args>
  explicit KindSink(LiveInventory& owner, Args&&... args)
      : owner_(owner), kind_(std::forward<Args>(args)...) {}
  void BeginList() override { listed_ = {}; }
  void AddListed(simdjson::ondemand::object o) override { kind_.List(listed_, o); }
  void EndList() override {
    owner_.ChangeIf([&](ClusterLedger& ledger) {
      listed_once_ = true;
      return kind_.Replace(ledger, std::move(listed_));
    });
    listed_ = {};  // its capacity too: a list is rare, and it held every object
  }
  void Apply(std::string_view type, simdjson::ondemand::object o) override {
    // A deletion needs the identity only, so an object that cannot be decoded still leaves.
    if (type == "DELETED") {
      PodInfo id = DecodeIdentity(o);
      owner_.ChangeIf([&](ClusterLedger& ledger) { return kind_.Delete(ledger, id); });
      return;
    }
    auto object = kind_.Decode(o);
    owner_.ChangeIf([&](ClusterLedger& ledger) { return kind_.Upsert(ledger, std::move(object)); });
  }
  const Kind& kind() const { return kind_; }
  // An initial list is in the ledger (ledger_mu_ held).
  bool listed() const { return listed_once_; }

 private:
  LiveInventory& owner_;
  Kind kind_;
  typename Kind::Listed listed_;
  bool listed_once_ = false;  // guarded by ledger_mu_
};

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

class LiveInventory::NodeObjects {
 public:
  using Listed = std::vector<NodeInfo>;
  void List(Listed& listed, simdjson::ondemand::object o) { listed.push_back(Decode(o)); }
  NodeInfo Decode(simdjson::ondemand::object o) {
    NodeInfo node = summary_.Counted(DecodeNode(o));
    node.pin_labels = pin_labels_.Share(std::move(node.pin_labels));
    return node;
  }
  bool Replace(ClusterLedger& ledger, Listed&& listed) {
    ledger.ReplaceNodes(std::move(listed));
    return true;
  }
  bool Upsert(ClusterLedger& ledger, NodeInfo node) {
    ledger.UpsertNode(std::move(node));
    return true;
  }
  bool Delete(ClusterLedger& ledger, const PodInfo& id) {
    ledger.DeleteNode(id.name);
    return true;
  }
  uint64_t summarised() const { return summary_.summarised(); }

 private:
  SummaryCount summary_;
  PinLabelPool pin_labels_;
};

class LiveInventory::PodObjects {
 public:
  using Listed = std::deque<PodInfo>;  // a deque: no regrowth copies, consumed as it is applied
  explicit PodObjects(const GpuResourceNames& gpu_names) : gpu_names_(gpu_names) {}
  void List(Listed& listed, simdjson::ondemand::object o) {
    PodInfo pod = summary_.Counted(DecodePod(o));
    // What the ledger keeps (GPU pods, and other pods while bound), slimmed to what it reads.
    bool holds = !pod.node_name.empty() && !pod.terminal();
    if (holds || AsksForGpuEitherWay(pod)) {
      listed.push_back(Slim(std::move(pod)));
    }
  }
  PodInfo Decode(simdjson::ondemand::object o) {
    PodInfo pod = summary_.Counted(DecodePod(o));
    pod.requests = KeptRequests(pod.requests);
    return pod;
  }
  bool Replace(ClusterLedger& ledger, Listed&& listed) {
    ledger.ReplacePods(std::move(listed));
    return true;
  }
  bool Upsert(ClusterLedger& ledger, PodInfo pod) {
    ledger.UpsertPod(pod);
    return true;
  }
  bool Delete(ClusterLedger& ledger, const PodInfo& id) {
    ledger.DeletePod(PodKey(id));
    return true;
  }
  uint64_t summarised() const { return summary_.summarised(); }

 private:
  // Whether the pod asks for a GPU through its requests or through DRA claims of its own (which the
  // ledger translates into requests when it takes the pod in).
  bool AsksForGpuEitherWay(const PodInfo& pod) const {
    return AsksForGpu(pod, gpu_names_) || HasOwnClaims(pod);
  }
  // A list of 150,000 pods is held until it is applied: each keeps only what the ledger reads.
  // GPU pods, far fewer, keep their labels and gpusched.io/ annotations, as a watched pod does:
  // planning judges them with the engine (annotations) and matches disruption budgets (labels).
  PodInfo Slim(PodInfo pod) const {
    pod.requests = KeptRequests(pod.requests);
    if (!AsksForGpuEitherWay(pod)) {
      pod.labels = {};
      pod.annotations = {};
    }
    pod.resource_version = {};
    pod.max_container_requests = {};
    return pod;
  }
  // The requests the ledger and planning read (cpu, memory, GPU resources), listed or watched:
  // other names are not kept per name.
  ResourceList KeptRequests(const ResourceList& requests) const {
    return requests.Filtered([&](std::string_view name) {
      return name == "cpu" || name == "memory" || gpu_names_.IsGpuResource(name);
    });
  }
  const GpuResourceNames& gpu_names_;
  SummaryCount summary_;
};

// One of the ledger's refusals (DraLedger::Refusals), under its reason in metrics. Neither this
// nor DraKind is in an anonymous namespace: LiveInventory::DraRefusalCount, a member class,
// holds them.
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

struct DraKind {
  const char* path;
  const char* name;  // in metrics
  std::span<const DraRefusal> refusals;
};
constexpr DraKind kDraKinds[] = {
    {"/apis/resource.k8s.io/v1/resourceslices", "resourceslice", kSliceRefusals},
    {"/apis/resource.k8s.io/v1/resourceclaims", "resourceclaim", kClaimRefusals},
    {"/apis/resource.k8s.io/v1/deviceclasses", "deviceclass", kClassRefusals}};

// What the ledger refused of one DRA kind (dra/dra_ledger.h), counted (refused()) and logged
// once per reason.
class LiveInventory::DraRefusalCount {
 public:
  explicit DraRefusalCount(const DraKind& kind)
      : refusals_(kind.refusals),
        refused_(kind.path, {refusals_.front().reason, refusals_.back().reason}) {}
  // Objects the ledger refused past its cap on this kind, under the kind's cap reason.
  std::map<std::string_view, uint64_t> refused() const { return refused_.counts(); }
  // Counts what `dra` refused of this kind since last counted, naming `object` in the log (the
  // ledger_mu_ held). Kinds past their cap are found when the devices are counted, for a
  // snapshot: the publisher calls this after building one.
  void Count(const DraLedger& dra, std::string_view object) {
    DraLedger::Refusals r = dra.refused();
    for (size_t i = 0; i < refusals_.size(); ++i) {
      uint64_t now = r.*refusals_[i].count;
      if (now > counted_[i]) {
        refused_.Add(refusals_[i].reason, object, refusals_[i].why, now - counted_[i]);
        counted_[i] = now;
      }
    }
  }

 private:
  std::span<const DraRefusal> refusals_;
  RefusalCounts refused_;
  uint64_t counted_[2] = {0, 0};  // of the ledger's refusals, those in refused_ (ledger_mu_ held)
};

// What the DRA kinds share (Kind: DraSliceKind, DraClaimKind or DraClassKind, dra/dra_store.h):
// each change but a deletion counts what the ledger refused meanwhile, naming the object in the
// log. A list is kept in the ledger's forms as it is decoded (slices compacted, claims compiled
// and bounded by bytes, classes compiled), never whole as decoded.
template <class Kind>
class LiveInventory::DraObjects {
 public:
  using Entries = std::vector<typename DraStore<Kind>::Entry>;
  explicit DraObjects(DraRefusalCount& refusals) : refusals_(refusals) {}
  bool Delete(ClusterLedger& ledger, const PodInfo& id) {
    ledger.dra().Delete<Kind>(Kind::Key(id.namespace_name, id.name));
    return true;
  }

 protected:
  bool ReplaceAll(ClusterLedger& ledger, Entries&& entries) {
    ledger.dra().Replace<Kind>(std::move(entries));
    refusals_.Count(ledger.dra(), "a listed object");
    return true;
  }
  // `object` kept, `name` naming it in the log.
  template <class Object>
  bool Keep(ClusterLedger& ledger, const std::string& name, Object object) {
    ledger.dra().Upsert(std::move(object));
    refusals_.Count(ledger.dra(), name);
    return true;
  }

 private:
  DraRefusalCount& refusals_;
};

class LiveInventory::SliceObjects : public DraObjects<DraSliceKind> {
 public:
  using Listed = Entries;
  SliceObjects(DraRefusalCount& refusals, std::shared_ptr<DraKindInterner> interner)
      : DraObjects(refusals), interner_(std::move(interner)) {}
  void List(Listed& listed, simdjson::ondemand::object o) {
    listed.push_back(std::make_shared<const DraStoredSlice>(Decode(o)));
  }
  DraStoredSlice Decode(simdjson::ondemand::object o) {
    return StoreSlice(DecodeDraSlice(o), *interner_);
  }
  bool Replace(ClusterLedger& ledger, Listed&& listed) {
    return ReplaceAll(ledger, std::move(listed));
  }
  bool Upsert(ClusterLedger& ledger, DraStoredSlice slice) {
    std::string name = slice.name;
    return Keep(ledger, name, std::move(slice));
  }

 private:
  std::shared_ptr<DraKindInterner> interner_;
};

class LiveInventory::ClaimObjects : public DraObjects<DraClaimKind> {
 public:
  struct Listed {
    Entries claims;
    size_t bytes = 0;  // what they hold
  };
  using DraObjects::DraObjects;
  void List(Listed& listed, simdjson::ondemand::object o) {
    // The list's claims replace the ledger's: the budget is the list's own.
    size_t left =
        listed.bytes >= kMaxDraClaimBytesTotal ? 0 : kMaxDraClaimBytesTotal - listed.bytes;
    auto entry = DraClaimEntry::Make(DecodeDraClaim(o), left);
    listed.bytes += entry->bytes;
    listed.claims.push_back(std::move(entry));
  }
  DraClaim Decode(simdjson::ondemand::object o) { return DecodeDraClaim(o); }
  bool Replace(ClusterLedger& ledger, Listed&& listed) {
    return ReplaceAll(ledger, std::move(listed.claims));
  }
  bool Upsert(ClusterLedger& ledger, DraClaim claim) {
    std::string name = DraClaimKind::Key(claim.namespace_name, claim.name);
    return Keep(ledger, name, std::move(claim));
  }
};

class LiveInventory::ClassObjects : public DraObjects<DraClassKind> {
 public:
  using Listed = Entries;
  using DraObjects::DraObjects;
  void List(Listed& listed, simdjson::ondemand::object o) {
    listed.push_back(DraClassEntry::Make(Decode(o)));
  }
  DraDeviceClass Decode(simdjson::ondemand::object o) { return DecodeDraDeviceClass(o); }
  bool Replace(ClusterLedger& ledger, Listed&& listed) {
    return ReplaceAll(ledger, std::move(listed));
  }
  bool Upsert(ClusterLedger& ledger, DraDeviceClass device_class) {
    std::string name = device_class.name;
    return Keep(ledger, name, std::move(device_class));
  }
};

// One kind of object stating pod group sizes (ClusterLedger::SetStatedSizes). A Job's status
// changes with each of its pods: only a change of size makes a new snapshot.
class LiveInventory::GroupSizeObjects {
 public:
  using Listed = std::vector<StatedGroupSizes>;
  explicit GroupSizeObjects(GroupSizeKind kind) : kind_(kind), source_(GroupSourceOf(kind)) {}
  void List(Listed& listed, simdjson::ondemand::object o) {
    StatedGroupSizes sizes = Decode(o);
    // Most Jobs run one pod and state nothing: a list keeps only the objects that state a size.
    if (!sizes.sizes.empty()) listed.push_back(std::move(sizes));
  }
  StatedGroupSizes Decode(simdjson::ondemand::object o) {
    StatedGroupSizes sizes = DecodeStatedGroupSizes(kind_, o);
    ignored_.fetch_add(sizes.refused);
    return sizes;
  }
  bool Replace(ClusterLedger& ledger, Listed&& listed) {
    return Counted(ledger.ReplaceStatedSizes(source_, std::move(listed)));
  }
  bool Upsert(ClusterLedger& ledger, StatedGroupSizes sizes) {
    return Counted(ledger.SetStatedSizes(source_, std::move(sizes)));
  }
  bool Delete(ClusterLedger& ledger, const PodInfo& id) {
    return Counted(ledger.DeleteStatedSizes(source_, id.namespace_name + "/" + id.name));
  }
  uint64_t ignored() const { return ignored_.load(); }

 private:
  bool Counted(ClusterLedger::StatedSizeChange change) {
    ignored_.fetch_add(change.dropped);
    return change.changed;
  }
  GroupSizeKind kind_;
  std::string_view source_;
  std::atomic<uint64_t> ignored_{0};  // sizes refused or dropped past the ledger's budget
};

namespace {

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
  node_sink_ = std::make_unique<KindSink<NodeObjects>>(*this);
  pod_sink_ = std::make_unique<KindSink<PodObjects>>(*this, gpu_names_);
  nodes_ = std::make_unique<Reflector>("/api/v1/nodes", config, *node_sink_, options_.reflector,
                                       options_.seed);
  pods_ = std::make_unique<Reflector>("/api/v1/pods", config, *pod_sink_, options_.reflector,
                                      options_.seed + 1);
  // DRA kind `i`, its refusals counted, its sink made by `make(refusals)`.
  auto watch_dra = [&](size_t i, auto make) {
    dra_refused_.push_back(std::make_unique<DraRefusalCount>(kDraKinds[i]));
    dra_sinks_.push_back(make(*dra_refused_.back()));
    dra_.push_back(std::make_unique<Reflector>(kDraKinds[i].path, config, *dra_sinks_.back(),
                                               options_.reflector, options_.seed + 2 + i));
  };
  if (options_.dra) {
    // (No thread runs yet: the ledger may be read without its lock.)
    watch_dra(0, [&](DraRefusalCount& refusals) {
      return std::make_unique<KindSink<SliceObjects>>(*this, refusals,
                                                      ledger_.dra().kind_interner());
    });
    watch_dra(1, [&](DraRefusalCount& refusals) {
      return std::make_unique<KindSink<ClaimObjects>>(*this, refusals);
    });
    watch_dra(2, [&](DraRefusalCount& refusals) {
      return std::make_unique<KindSink<ClassObjects>>(*this, refusals);
    });
  }
  ReflectorOptions optional_kind = options_.reflector;
  optional_kind.quiet_repeated_failures = true;  // most clusters serve few of these kinds
  for (size_t i = 0; options_.group_sizes && i < std::size(kGroupKinds); ++i) {
    group_sinks_.push_back(
        std::make_unique<KindSink<GroupSizeObjects>>(*this, kGroupKinds[i].kind));
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
      node_sink_->listed() && pod_sink_->listed() &&
      std::all_of(dra_.begin(), dra_.end(), [](const auto& r) { return r->attempted(); });
  if (!dirty_ && (complete_published_ || !complete)) return;
  dirty_ = false;
  auto snapshot = ledger_.BuildSnapshot();
  for (auto& refused : dra_refused_) refused->Count(ledger_.dra(), "the devices of a snapshot");
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
  return SkipsOf(*nodes_, node_sink_->kind().summarised());
}

LiveInventory::Skips LiveInventory::pod_skips() const {
  return SkipsOf(*pods_, pod_sink_->kind().summarised());
}

std::vector<std::pair<std::string_view, LiveInventory::Skips>> LiveInventory::dra_skips() const {
  std::vector<std::pair<std::string_view, Skips>> out;
  for (size_t i = 0; i < dra_.size(); ++i) {
    Skips skips = SkipsOf(*dra_[i], 0);
    for (const auto& [reason, n] : dra_refused_[i]->refused()) skips.refused[reason] += n;
    out.emplace_back(kDraKinds[i].name, std::move(skips));
  }
  return out;
}

std::vector<std::pair<std::string_view, LiveInventory::Skips>> LiveInventory::group_skips() const {
  std::vector<std::pair<std::string_view, Skips>> out;
  for (size_t i = 0; i < groups_.size(); ++i) {
    out.emplace_back(kGroupKinds[i].name, SkipsOf(*groups_[i], group_sinks_[i]->kind().ignored()));
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
