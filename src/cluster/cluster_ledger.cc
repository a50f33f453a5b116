// Longer than 500 lines: the ledger is the inventory's one writer, and what it keeps (nodes, pods
// and their charges, assumptions, groups, the published states and their classes) changes
// together under its one lock; the ideas of their own are in their own files (node_totals,
// content_classes, pod_groups, dra_ledger).
#include "gpusched/cluster/cluster_ledger.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "gpusched/dra/dra_claims.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/packing/gpu_devices.h"

namespace gpusched {

namespace {

// What DRA devices add to a node that advertises no nvidia.com/gpu of its own (ClusterLedger).
void ApplyDraView(NodeState& state, const DraNodeView& view) {
  if (state.info.allocatable.milli(kGpuResource) > 0) return;  // the device plugin's GPUs
  for (const auto& r : view.allocatable) {
    state.info.allocatable.Set(r.name, r.milli);
    state.info.capacity.Set(r.name, r.milli);
    // Its pods charge what their claims ask for (ClusterLedger::UpsertPod), assumed pods included;
    // the claims' allocations say what is taken, pods not yet bound to them included. The larger:
    // each pod's claims counted once, whichever side saw them first.
    state.used.Set(r.name, std::max(state.used.milli(r.name), view.used.milli(r.name)));
  }
  GpuLabels& gpu = state.info.gpu;
  if (gpu.product.empty()) gpu.product = view.product;
  if (!gpu.memory_mib && view.memory_mib > 0) gpu.memory_mib = view.memory_mib;
  if (!gpu.count) gpu.count = view.allocatable.units(kGpuResource);
}

}  // namespace

ClusterLedger::ClusterLedger(GpuResourceNames gpu_names, Clock::duration workload_half_life)
    : gpu_names_(std::move(gpu_names)), observed_(workload_half_life) {}

void ClusterLedger::UpsertNode(NodeInfo node) {
  std::string name = node.name;
  auto old = nodes_.find(name);
  product_labels_stale_ = product_labels_stale_ || old == nodes_.end() ||
                          old->second.gpu.product != node.gpu.product ||
                          !(old->second.pin_labels == node.pin_labels);
  if (old == nodes_.end() || !(old->second.allocatable == node.allocatable)) {
    standard_workload_.reset();
  }
  nodes_.insert_or_assign(name, std::move(node));
  dirty_.insert(std::move(name));
}

void ClusterLedger::DeleteNode(std::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  nodes_.erase(it);
  product_labels_stale_ = true;
  standard_workload_.reset();
  dirty_.emplace(name);
}

PodCharge ClusterLedger::PodRecord::charge() const {
  return PodCharge::Of(cpu_milli, memory_milli, gpu_requests);
}

void ClusterLedger::Charge(const PodRecord& pod, int sign) {
  if (!pod.counted) return;
  NodeState& usage = usage_[pod.node_name];
  if (sign > 0) {
    ChargePod(usage, pod.charge());
  } else {
    UnchargePod(usage, pod.charge());
  }
  if (usage.pod_count == 0) usage_.erase(pod.node_name);
  dirty_.insert(pod.node_name);
}

void ClusterLedger::Observe(const PodRecord& record, const NodePins& pins) {
  // Live requests of extended resources are whole units: whole devices and MIG slices.
  TaskShape shape = ShapeOf(record.gpu_requests);
  if (!shape.wants_gpu() && !shape.wants_mig()) return;
  // The CPU a GPU pod asks for decides where the next ones fit (fgd, cpu-reserve); pods asking
  // for no GPU are not observed: in most clusters they outnumber GPU pods by far, and the shapes
  // FGD keeps (its 95% cut) would be theirs alone.
  shape.cpu_milli = record.cpu_milli;
  if (!record.dra_products.empty()) {  // pinned by its claims' selectors, not by node labels
    shape.gpu_models = record.dra_products;
    observed_.Add(shape, Clock::now());
    dirty_.emplace();
    return;
  }
  if (pins.has_required_pins() && ProductLabels().empty() && deferred_.size() < kMaxDeferred) {
    deferred_.push_back(Deferred{std::move(shape), pins, Clock::now()});
    return;
  }
  Count(std::move(shape), pins, Clock::now());
}

void ClusterLedger::Count(TaskShape shape, const NodePins& pins, Clock::time_point seen) {
  if (pins.has_required_pins()) {
    auto products = PinnedProducts(pins);
    if (!products) return;  // no GPU product of the cluster can run it
    shape.gpu_models = std::move(*products);
  }
  observed_.Add(shape, seen);
  dirty_.emplace();  // the snapshot's workload changes even when no node does
}

std::optional<std::vector<std::string>> ClusterLedger::PinnedProducts(const NodePins& pins) {
  const auto& products = ProductLabels();
  std::vector<std::string> meeting;
  for (const auto& [product, label_sets] : products) {
    if (std::any_of(label_sets.begin(), label_sets.end(),
                    [&](const PinLabels& labels) { return MeetsRequiredPins(pins, labels); })) {
      meeting.push_back(product);
    }
  }
  if (meeting.empty()) return std::nullopt;
  if (meeting.size() == products.size()) meeting.clear();  // every product: not pinned
  return meeting;
}

const std::map<std::string, std::vector<PinLabels>, std::less<>>& ClusterLedger::ProductLabels() {
  if (!product_labels_stale_) return product_labels_;
  product_labels_.clear();
  for (const auto& [name, node] : nodes_) {
    if (node.gpu.product.empty()) continue;
    auto& label_sets = product_labels_[node.gpu.product];
    if (std::find(label_sets.begin(), label_sets.end(), node.pin_labels) == label_sets.end()) {
      label_sets.push_back(node.pin_labels);
    }
  }
  product_labels_stale_ = false;
  return product_labels_;
}

void ClusterLedger::Erase(std::unordered_map<std::string, PodRecord>::iterator it) {
  Charge(it->second, -1);
  if (it->second.info && it->second.info->group.grouped()) {
    auto members = group_members_.find(it->second.info->group.key);
    if (members != group_members_.end()) {
      members->second.erase(it->first);
      if (members->second.empty()) group_members_.erase(members);
    }
    pod_groups_.reset();
  }
  if (it->second.assumed_until) assumed_.erase(it->first);
  if (!it->second.gpu_requests.empty()) --gpu_pods_;
  pods_.erase(it);
}

void ClusterLedger::Put(std::string key, PodRecord record, const NodePins& pins) {
  auto it = pods_.find(key);
  // An assumption keeps the pod's info: the GPU pod list stands.
  if (it == pods_.end() ? record.info != nullptr : it->second.info != record.info) {
    gpu_pod_list_.reset();
  }
  if (record.counted) {
    // Counted since it was first counted on this node: a group's hold runs from its first member.
    bool kept = it != pods_.end() && it->second.counted && it->second.node_name == record.node_name;
    record.counted_since = kept ? it->second.counted_since : Clock::now();
  }
  // First seen asking for GPUs: new, or a pod whose claims were not known before.
  if (!record.gpu_requests.empty() && (it == pods_.end() || it->second.gpu_requests.empty())) {
    Observe(record, pins);
  }
  if (it != pods_.end()) Erase(it);
  // Other pods matter only while they hold resources.
  if (record.gpu_requests.empty() && !record.counted) return;
  Charge(record, +1);
  if (record.info && record.info->group.grouped()) {
    group_members_[record.info->group.key].insert(key);
    pod_groups_.reset();
  }
  if (record.assumed_until) {
    assumed_.insert_or_assign(key, std::make_shared<const Assumption>(
                                       Assumption{key, record.node_name, record.charge()}));
    next_expiry_ = std::min(next_expiry_, *record.assumed_until);
  }
  if (!record.gpu_requests.empty()) ++gpu_pods_;
  pods_.emplace(std::move(key), std::move(record));
}

void ClusterLedger::UpsertPod(const PodInfo& watched) {
  // A pod with DRA claims as placement judges it: what they ask for added to its requests.
  ClaimResolution resolved = ResolveClaims(watched, &dra_, DraDemandScope::kAsked);
  const PodInfo& pod = resolved.pod.pod();
  const bool awaits_claim = resolved.awaits_claim && !watched.terminal();
  std::string key = PodKey(pod);
  if (!awaits_claim) {
    awaiting_claims_.erase(key);
  } else if (awaiting_claims_.size() < kMaxAwaitingClaims || awaiting_claims_.contains(key)) {
    awaiting_claims_[key] = std::make_shared<const PodInfo>(watched);
  }
  PodRecord record;
  record.node_name = pod.node_name;
  record.dra_products = std::move(resolved.products);
  record.gpu_requests = GpuDemand(pod, gpu_names_);
  record.cpu_milli = pod.requests.milli("cpu");
  record.memory_milli = pod.requests.milli("memory");
  record.terminal = pod.terminal();
  record.counted = !record.node_name.empty() && !pod.terminal();
  auto it = pods_.find(key);
  if (it != pods_.end() && pod.node_name.empty() && !pod.terminal()) {
    if (it->second.assumed_until) return;  // the watch has not caught up with the scheduler yet
    record.assume_window = it->second.assume_window;  // still pending: the window stands
  }
  // Terminal pods are in no list: their info would be memory for nothing.
  if (!record.gpu_requests.empty() && !record.terminal) {
    // The rebuilt pod is kept as translated, not translated again.
    record.info =
        resolved.pod.rebuilt() ? resolved.pod.rebuilt() : std::make_shared<const PodInfo>(pod);
  }
  Put(std::move(key), std::move(record), pod.pins);
}

ClusterLedger::AssumeResult ClusterLedger::Assume(std::string_view key, std::string_view node,
                                                  Clock::time_point now, Clock::duration ttl) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end()) return AssumeResult::kUnknownPod;
  const PodRecord& known = it->second;
  bool bound = known.counted && !known.assumed_until;
  if (bound || known.terminal || known.gpu_requests.empty()) return AssumeResult::kRefused;
  Clock::time_point window = known.assume_window.value_or(now + ttl);
  Clock::time_point expires = std::min(now + ttl, window);
  if (expires <= now) return AssumeResult::kRefused;
  PodRecord record = known;  // its info too: an assumption leaves the pod pending
  record.node_name = std::string(node);
  record.counted = true;
  record.assumed_until = expires;
  record.assume_window = window;
  Put(std::string(key), std::move(record), NodePins());
  return AssumeResult::kApplied;
}

void ClusterLedger::Unassume(const std::string& key, PodRecord& record) {
  Charge(record, -1);
  if (record.info && record.info->group.grouped()) pod_groups_.reset();
  record.counted = false;
  record.assumed_until.reset();
  record.node_name.clear();
  assumed_.erase(key);
}

bool ClusterLedger::Forget(std::string_view key) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end() || !it->second.assumed_until) return false;
  Unassume(it->first, it->second);
  return true;
}

size_t ClusterLedger::ExpireAssumptions(Clock::time_point now) {
  if (now < next_expiry_) return 0;
  std::vector<std::string> expired;
  next_expiry_ = Clock::time_point::max();
  for (const auto& [key, assumption] : assumed_) {
    Clock::time_point until = *pods_.at(key).assumed_until;
    if (until <= now) expired.push_back(key);
    if (until > now) next_expiry_ = std::min(next_expiry_, until);
  }
  for (const auto& key : expired) Unassume(key, pods_.at(key));
  return expired.size();
}

void ClusterLedger::DeletePod(std::string_view key) {
  awaiting_claims_.erase(std::string(key));
  auto it = pods_.find(std::string(key));
  if (it == pods_.end()) return;
  if (it->second.info) gpu_pod_list_.reset();
  Erase(it);
}

void ClusterLedger::ReplaceNodes(std::vector<NodeInfo> nodes) {
  std::set<std::string, std::less<>> keep;
  for (const auto& n : nodes) keep.insert(n.name);
  std::vector<std::string> gone;
  for (const auto& [name, node] : nodes_) {
    if (!keep.count(name)) gone.push_back(name);
  }
  for (const auto& name : gone) DeleteNode(name);
  for (auto& n : nodes) UpsertNode(std::move(n));
}

void ClusterLedger::ReplacePods(std::deque<PodInfo> pods) {
  // Each listed pod is stamped with this list, rather than its key kept in a set of 150,000.
  // A pod awaiting its claims is kept apart (awaiting_claims_, bounded), not in pods_.
  const uint64_t list = ++pods_lists_;
  std::set<std::string, std::less<>> listed_awaiting;
  pods_.reserve(std::max(pods_.size(), pods.size()));  // no rehash after rehash while it grows
  for (; !pods.empty(); pods.pop_front()) {
    std::string key = PodKey(pods.front());
    UpsertPod(pods.front());
    if (auto it = pods_.find(key); it != pods_.end()) it->second.listed_in = list;
    if (awaiting_claims_.contains(key)) listed_awaiting.insert(std::move(key));
  }
  std::vector<std::string> gone;
  for (const auto& [key, record] : pods_) {
    if (record.listed_in != list) gone.push_back(key);
  }
  for (const auto& key : gone) DeletePod(key);
  std::erase_if(awaiting_claims_,
                [&](const auto& entry) { return !listed_awaiting.contains(entry.first); });
}

void ClusterLedger::RetryAwaitingClaims() {
  if (dra_.version() == dra_seen_) return;
  dra_seen_ = dra_.version();
  std::vector<std::shared_ptr<const PodInfo>> waiting;
  for (const auto& [key, pod] : awaiting_claims_) waiting.push_back(pod);
  for (const auto& pod : waiting) UpsertPod(*pod);
}

const std::vector<WeightedShape>& ClusterLedger::StandardWorkload() {
  if (standard_workload_) return *standard_workload_;
  // The published nodes: those whose GPUs are DRA devices have them in their allocatable there.
  std::vector<const NodeInfo*> nodes;
  nodes.reserve(published_.size());
  for (const auto& [name, node] : published_) nodes.push_back(&node.state->info);
  standard_workload_ = StandardWorkloadOf(nodes);
  return *standard_workload_;
}

std::shared_ptr<const GpuPodList> ClusterLedger::CurrentGpuPods() {
  if (gpu_pod_list_) return gpu_pod_list_;
  std::vector<GpuPodList::PodPtr> pending;
  std::vector<GpuPodList::PodPtr> bound;
  for (const auto& [key, record] : pods_) {
    if (!record.info || record.info->terminal()) continue;
    (record.info->node_name.empty() ? pending : bound).push_back(record.info);
  }
  gpu_pod_list_ = std::make_shared<const GpuPodList>(std::move(pending), std::move(bound));
  return gpu_pod_list_;
}

std::shared_ptr<const PodGroups> ClusterLedger::CurrentPodGroups() {
  if (pod_groups_) return pod_groups_;
  PodGroups::Builder groups;
  for (const auto& [group, keys] : group_members_) {
    for (const auto& key : keys) {
      const PodRecord& record = pods_.at(key);
      if (!record.info || record.terminal) continue;
      groups.Add(*record.info, record.counted ? std::string_view(record.node_name) : "",
                 record.counted_since);
    }
  }
  // The stated sizes copied once per change of them, shared by the indexes built until the next.
  if (!stated_view_) stated_view_ = std::make_shared<const StatedSizes>(stated_sizes_);
  pod_groups_ = std::make_shared<const PodGroups>(std::move(groups).Build(stated_view_));
  return pod_groups_;
}

ClusterLedger::StatedSizeChange ClusterLedger::SetStatedSizes(std::string_view source,
                                                              StatedGroupSizes sizes) {
  std::string id = std::string(source) + "/" + sizes.object;
  // What the object stated before and states now (duplicate keys: the last), to tell a change.
  std::map<std::string, int32_t, std::less<>> before;
  std::map<std::string, int32_t, std::less<>> after;
  if (auto it = stated_by_.find(id); it != stated_by_.end()) {
    for (const auto& key : it->second) {
      if (auto size = stated_sizes_.find(key); size != stated_sizes_.end()) {
        before.insert_or_assign(key, size->second);
        stated_sizes_.erase(size);
        stated_view_.reset();
      }
    }
    stated_by_.erase(it);
  }
  StatedSizeChange change;
  std::vector<std::string> keys;
  for (auto& s : sizes.sizes) {
    if (stated_sizes_.size() >= kMaxStatedGroupSizes && !stated_sizes_.count(s.key)) {
      ++change.dropped;
      continue;
    }
    stated_sizes_.insert_or_assign(s.key, s.size);
    stated_view_.reset();
    after.insert_or_assign(s.key, s.size);
    keys.push_back(std::move(s.key));
  }
  if (!keys.empty()) stated_by_.emplace(std::move(id), std::move(keys));
  // A Job's status changes far more often than its parallelism: only a size change rebuilds.
  change.changed = before != after;
  if (change.changed) pod_groups_.reset();
  return change;
}

ClusterLedger::StatedSizeChange ClusterLedger::DeleteStatedSizes(std::string_view source,
                                                                 std::string_view object) {
  StatedGroupSizes none;
  none.object = std::string(object);
  return SetStatedSizes(source, std::move(none));
}

ClusterLedger::StatedSizeChange ClusterLedger::ReplaceStatedSizes(
    std::string_view source, std::vector<StatedGroupSizes> objects) {
  std::string prefix = std::string(source) + "/";
  std::set<std::string, std::less<>> keep;
  for (const auto& o : objects) keep.insert(prefix + o.object);
  std::vector<std::string> gone;
  for (auto it = stated_by_.lower_bound(prefix);
       it != stated_by_.end() && it->first.starts_with(prefix); ++it) {
    if (!keep.count(it->first)) gone.push_back(it->first.substr(prefix.size()));
  }
  StatedSizeChange change;
  auto add = [&](StatedSizeChange c) {
    change.changed = change.changed || c.changed;
    change.dropped += c.dropped;
  };
  // The deletions first: what they free is the budget of the objects listed.
  for (const auto& object : gone) add(DeleteStatedSizes(source, object));
  for (auto& o : objects) add(SetStatedSizes(source, std::move(o)));
  return change;
}

void ClusterLedger::KeepPublishedClasses(std::span<const uint32_t> replaced) {
  if (published_index_ && !published_classes_.overgrown()) {
    published_classes_.Renumber(published_states_, published_hashes_, replaced);
    return;
  }
  published_states_.clear();
  published_hashes_.clear();
  for (const auto& [name, node] : published_) {
    published_states_.push_back(node.state);
    published_hashes_.push_back(node.hashes);
  }
  published_classes_.Reset(published_states_, published_hashes_);
}

std::shared_ptr<const ClusterSnapshot> ClusterLedger::BuildSnapshot() {
  RetryAwaitingClaims();
  if (!deferred_.empty() && !ProductLabels().empty()) {
    for (auto& d : deferred_) Count(std::move(d.shape), d.pins, d.seen);
    deferred_.clear();
  }
  for (auto& name : dra_.TakeDirtyNodes()) {
    dirty_.insert(std::move(name));
    standard_workload_.reset();  // its GPUs as DRA devices may have changed
  }
  const auto& dra_views = dra_.NodeViews();
  std::vector<uint32_t> replaced;  // positions in published_states_, while the names stay
  for (const auto& name : dirty_) {
    if (name.empty()) continue;  // marks a workload change only
    auto node = nodes_.find(name);
    auto before = published_.find(name);
    if (before != published_.end()) published_totals_.Remove(*before->second.state);
    if (node == nodes_.end()) {
      if (before != published_.end()) {
        published_.erase(before);
        published_index_.reset();
      }
      continue;
    }
    auto state = std::make_shared<NodeState>();
    state->info = node->second;
    auto usage = usage_.find(name);
    if (usage != usage_.end()) {
      state->used = usage->second.used;
      state->pod_count = usage->second.pod_count;
      state->gpu_pod_count = usage->second.gpu_pod_count;
    }
    if (auto view = dra_views.find(name); view != dra_views.end()) {
      ApplyDraView(*state, view->second);
      state->used.DropZeros();
    }
    published_totals_.Add(*state);
    // Braced initializers run in order: the hashes are taken before the state moves in.
    PublishedNode published{.hashes = WholeDeviceContentHashes(*state), .state = std::move(state)};
    if (before != published_.end()) {
      uint32_t at = published_index_ ? published_index_->Find(name) : NodeIndex::kAbsent;
      if (at != NodeIndex::kAbsent) {  // in place; otherwise numbered afresh
        published_states_[at] = published.state;
        published_hashes_[at] = published.hashes;
        replaced.push_back(at);
      } else {
        published_index_.reset();
      }
      before->second = std::move(published);
    } else {
      published_.emplace(name, std::move(published));
      published_index_.reset();
    }
  }
  dirty_.clear();
  KeepPublishedClasses(replaced);
  Assumptions assumptions;
  for (const auto& [key, assumption] : assumed_) assumptions.push_back(assumption);
  auto snapshot = std::make_shared<const ClusterSnapshot>(SnapshotParts{
      .nodes = published_states_,
      .generation = ++generation_,
      .observed_workload = observed_.Observed(),
      .standard_workload = StandardWorkload(),
      .assumptions = std::move(assumptions),
      .gpu_pods = CurrentGpuPods(),
      .dra = dra_.slice_count() + dra_.claim_count() + dra_.class_count() > 0 ? dra_.Catalog()
                                                                              : nullptr,
      .groups = CurrentPodGroups(),
      .classes = published_classes_.numbers(),
      .index = published_index_,
      .totals = published_totals_.Summary()});
  published_index_ = snapshot->shared_index();
  return snapshot;
}

}  // namespace gpusched
