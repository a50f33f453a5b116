#include "gpusched/app/placeholder_controller.h"

#include <spdlog/spdlog.h>

#include "gpusched/codec/admission_codec.h"
#include "gpusched/codec/json_writer.h"
#include "gpusched/codec/k8s_decode.h"
#include "gpusched/codec/placeholder_codec.h"
#include "gpusched/planning/kube_names.h"
#include "gpusched/util/quote.h"

namespace gpusched {
namespace {

// What the pass remembers of its own writes: the watch shows them a moment later, and a write
// repeated in that moment would only be answered 404 or 409.
constexpr int64_t kWriteEchoSeconds = 30;
// A pod that fits but waits is touched after this long, again at most this often, at most
// kMaxTouchesPerPod times (a pod kube-scheduler refuses for its own reasons, CPU or taints, would
// otherwise be touched for ever), and at most kMaxTouchesPerPass pods a pass.
constexpr int64_t kTouchAfterSeconds = 5;
constexpr int64_t kTouchEverySeconds = 30;
constexpr int kMaxTouchesPerPod = 3;
constexpr int kMaxTouchesPerPass = 10;
constexpr char kNodeReadyAnnotation[] = "gpusched.io/placeholder-node-ready";

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string PodPath(std::string_view namespace_name, std::string_view name = {}) {
  std::string path = "/api/v1/namespaces/" + std::string(namespace_name) + "/pods";
  if (!name.empty()) path += "/" + std::string(name);
  return path;
}

std::string DeleteOptions(std::string_view uid) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("apiVersion").String("v1").Key("kind").String("DeleteOptions");
  w.Key("gracePeriodSeconds").Int(0);
  w.Key("preconditions").BeginObject().Key("uid").String(uid).EndObject();
  w.EndObject();
  return out;
}

std::string NodeList(const std::vector<std::string>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size() && i < 3; ++i) out += (i ? ", " : "") + nodes[i];
  if (nodes.size() > 3) out += ", ... (" + std::to_string(nodes.size()) + ")";
  return QuoteForMessage(out, 300);
}

}  // namespace

PlaceholderController::PlaceholderController(const KubeConfig& config,
                                             const InventorySource& inventory,
                                             const Published<Policy>& policies,
                                             PlaceholderControllerOptions options)
    : inventory_(inventory),
      policies_(policies),
      options_(std::move(options)),
      client_(config, ApiClientOptions{std::chrono::seconds(5), std::chrono::seconds(10)}),
      lease_(client_, LeaseLockOptions{options_.lease_namespace, std::string(kPlaceholderLeaseName),
                                       options_.identity, options_.lease_duration}),
      thread_(options_.interval, [this] { Pass(); }) {}

PlaceholderController::~PlaceholderController() {
  thread_.Stop();
  lease_.Release();
}

void PlaceholderController::Pass() {
  bool was_writer = lease_.held();
  bool writer = lease_.Refresh(LeaseLock::Clock::now());
  counts_->writer = writer ? 1 : 0;
  if (writer != was_writer) {
    spdlog::info("placeholders: {} the writer (Lease {}/{})", writer ? "now" : "no longer",
                 options_.lease_namespace, kPlaceholderLeaseName);
  }
  if (!lease_.last_error().empty()) spdlog::warn("placeholders: {}", lease_.last_error());
  if (!writer) {
    seen_.clear();  // another replica's doing meanwhile
    return;
  }
  if (!inventory_.readiness().ready) return;
  std::shared_ptr<const ClusterSnapshot> snapshot = inventory_.snapshots().Get();
  std::shared_ptr<const Policy> policy = policies_.Get();
  if (!snapshot || !policy) return;
  const AutoscalingSpec::Placeholders& spec = policy->spec().autoscaling.placeholders;
  int64_t now = UnixNow();
  std::erase_if(holds_, [&](const auto& h) { return h.second <= now; });
  std::erase_if(written_, [&](const auto& w) { return now - w.second > kWriteEchoSeconds; });
  HoldVanished(*snapshot, now, spec.hold_seconds);

  PlaceholderPlan plan = PlanPlaceholders(*policy, *snapshot, holds_, now);
  counts_->existing = static_cast<int64_t>(plan.existing);
  counts_->held = static_cast<int64_t>(plan.held);
  counts_->too_many_nodes = static_cast<int64_t>(plan.too_many_nodes);
  counts_->over_budget = static_cast<int64_t>(plan.over_budget);
  for (const PlaceholderToDelete& d : plan.remove) Delete(d, now, spec.hold_seconds);
  for (const PlaceholderToCreate& c : plan.create) Create(c, spec, now);
  Touch(plan.fit_but_wait, now);
}

void PlaceholderController::Touch(const std::vector<PodInfo>& pods, int64_t now_unix) {
  std::map<std::string, int64_t> fit_since;
  int this_pass = 0;
  for (const PodInfo& pod : pods) {
    auto seen = fit_since_.find(pod.uid);
    int64_t since = seen == fit_since_.end() ? now_unix : seen->second;
    fit_since[pod.uid] = since;
    Touched& last = touched_[pod.uid];
    if (now_unix - since < kTouchAfterSeconds || now_unix - last.at < kTouchEverySeconds ||
        last.times == kMaxTouchesPerPod || this_pass == kMaxTouchesPerPass ||
        !IsDnsSubdomain(pod.namespace_name) || !IsDnsSubdomain(pod.name)) {
      continue;
    }
    ++this_pass;
    last = Touched{now_unix, last.times + 1};
    std::string patch;
    JsonWriter w(patch);
    w.BeginObject().Key("metadata").BeginObject();
    w.Key("uid").String(pod.uid);  // a pod made anew under the name is not touched
    w.Key("annotations").BeginObject().Key(kNodeReadyAnnotation).String(std::to_string(now_unix));
    w.EndObject().EndObject().EndObject();
    HttpResult r = client_.Send("PATCH", PodPath(pod.namespace_name, pod.name), patch,
                                ApiClient::kMaxSendAnswer, "application/merge-patch+json");
    std::string what = QuoteForMessage(pod.namespace_name + "/" + pod.name, 320);
    if (r.status == 200) {
      ++counts_->touched;
      spdlog::info(
          "placeholders: touched {}: gpusched takes it on a node now, and kube-scheduler "
          "has not retried it for {} s",
          what, now_unix - since);
    } else {
      ++counts_->touch_failed;
      spdlog::warn("placeholders: touching {}: {}", what, r.failure());
    }
  }
  fit_since_ = std::move(fit_since);
  std::erase_if(touched_, [&](const auto& t) { return !fit_since_.contains(t.first); });
}

void PlaceholderController::HoldVanished(const ClusterSnapshot& snapshot, int64_t now_unix,
                                         int64_t hold_seconds) {
  std::map<std::string, std::string> now_seen;
  for (const auto* list : {&snapshot.gpu_pods().pending, &snapshot.gpu_pods().bound}) {
    for (const PodInfo& p : *list) {
      if (IsPlaceholder(p))
        now_seen.emplace(p.name.substr(kPlaceholderNamePrefix.size()), p.namespace_name);
    }
  }
  for (const auto& [owner, ns] : seen_) {
    if (now_seen.contains(owner) || holds_.contains(owner)) continue;
    for (const PodInfo& p : snapshot.gpu_pods().pending) {
      if (p.uid == owner) {
        holds_[owner] = now_unix + hold_seconds;
        spdlog::info(
            "placeholders: the placeholder of {}/{} is gone while it waits (preempted?): "
            "no new one for {} s",
            QuoteForMessage(p.namespace_name, 64), QuoteForMessage(p.name, 253), hold_seconds);
        break;
      }
    }
  }
  seen_ = std::move(now_seen);
}

void PlaceholderController::Delete(const PlaceholderToDelete& d, int64_t now_unix,
                                   int64_t hold_seconds) {
  if (d.hold_owner()) holds_[d.owner_uid] = now_unix + hold_seconds;
  if (!IsDnsSubdomain(d.namespace_name) || !IsDnsSubdomain(d.name)) return;
  seen_.erase(d.owner_uid);  // its going is this pass's doing, not a preemption
  if (written_.contains(d.uid)) return;
  written_[d.uid] = now_unix;
  HttpResult r = client_.Send("DELETE", PodPath(d.namespace_name, d.name), DeleteOptions(d.uid));
  std::string what = QuoteForMessage(d.namespace_name + "/" + d.name, 320);
  if (r.status == 200 || r.status == 202) {
    ++counts_->deleted;
    spdlog::info("placeholders: deleted {} ({})", what, PlaceholderEndName(d.end));
  } else if (r.status == 404 || r.status == 409) {
    ++counts_->delete_gone;
  } else {
    ++counts_->delete_failed;
    written_.erase(d.uid);
    spdlog::warn("placeholders: deleting {}: {}", what, r.failure());
  }
}

void PlaceholderController::Create(const PlaceholderToCreate& c,
                                   const AutoscalingSpec::Placeholders& spec, int64_t now_unix) {
  const PodInfo& owner = c.owner;
  if (!IsDnsSubdomain(owner.namespace_name) || !IsDnsSubdomain(owner.name) ||
      !IsLabelValue(owner.uid)) {
    return;  // the API server names pods so; a path is built only from such names
  }
  std::string name = PlaceholderName(owner.uid);
  std::string key = owner.namespace_name + "/" + name;
  if (written_.contains(key)) return;
  std::string what = QuoteForMessage(owner.namespace_name + "/" + owner.name, 320);
  HttpResult got = client_.Get(PodPath(owner.namespace_name, owner.name));
  if (got.status != 200) {
    ++counts_->create_failed;
    spdlog::warn("placeholders: reading pod {}: {}", what, got.failure());
    return;
  }
  PlaceholderPod pod;
  try {
    pod.copied = DecodePodSchedulingText(got.body);
  } catch (const DecodeError& e) {
    ++counts_->create_failed;
    spdlog::warn("placeholders: pod {} unreadable: {}", what, e.what());
    return;
  }
  if (pod.copied.uid != owner.uid) return;  // deleted and made anew since the snapshot
  pod.namespace_name = owner.namespace_name;
  pod.owner_name = owner.name;
  pod.owner_uid = owner.uid;
  pod.requests = owner.requests;
  pod.excluded_nodes = c.excluded_nodes;
  pod.priority_class = spec.priority_class;
  pod.image = spec.image;
  written_[key] = now_unix;
  HttpResult r = client_.Send("POST", PodPath(owner.namespace_name), EncodePlaceholderPod(pod));
  if (r.status == 201) {
    ++counts_->created;
    spdlog::info(
        "placeholders: created {}/{} for {}: {}; the autoscaler takes the pod as fitting "
        "{}, which gpusched refuses",
        QuoteForMessage(owner.namespace_name, 64), name, what,
        QuoteForMessage(FormatResourceList(owner.requests), 300), NodeList(c.excluded_nodes));
  } else if (r.status == 409) {
    ++counts_->create_conflict;
  } else {
    ++counts_->create_failed;
    written_.erase(key);
    if (r.status == 403 && warned_forbidden_) return;
    warned_forbidden_ = warned_forbidden_ || r.status == 403;
    spdlog::warn("placeholders: creating {} for {}: {} {}", name, what, r.failure(),
                 QuoteForMessage(r.body, 300));
  }
}

SeriesCollector PlaceholderController::Collector() const {
  return
      [counts = std::shared_ptr<const Counts>(counts_)](SeriesWriter& out) { counts->Write(out); };
}

void PlaceholderController::Counts::Write(SeriesWriter& out) const {
  const Counts& c = *this;
  out.Gauge("gpusched_placeholders", "Placeholder pods in the newest snapshot (the writer's view)")
      .Add({}, static_cast<double>(c.existing.load()));
  out.Gauge("gpusched_placeholder_writer",
            "1 when this replica holds the placeholders' Lease and writes them")
      .Add({}, static_cast<double>(c.writer.load()));
  auto writes = out.Counter("gpusched_placeholder_writes_total",
                            "Placeholder pods created and deleted, and waiting pods touched, by "
                            "action and result");
  writes.Add({{"action", "create"}, {"result", "ok"}}, static_cast<double>(c.created.load()));
  writes.Add({{"action", "create"}, {"result", "exists"}},
             static_cast<double>(c.create_conflict.load()));
  writes.Add({{"action", "create"}, {"result", "error"}},
             static_cast<double>(c.create_failed.load()));
  writes.Add({{"action", "delete"}, {"result", "ok"}}, static_cast<double>(c.deleted.load()));
  writes.Add({{"action", "delete"}, {"result", "gone"}}, static_cast<double>(c.delete_gone.load()));
  writes.Add({{"action", "delete"}, {"result", "error"}},
             static_cast<double>(c.delete_failed.load()));
  writes.Add({{"action", "touch"}, {"result", "ok"}}, static_cast<double>(c.touched.load()));
  writes.Add({{"action", "touch"}, {"result", "error"}},
             static_cast<double>(c.touch_failed.load()));
  auto waiting = out.Gauge("gpusched_placeholder_pods_waiting",
                           "Pods the autoscaler cannot see that have no placeholder, by why");
  waiting.Add({{"reason", "on_hold"}}, static_cast<double>(c.held.load()));
  waiting.Add({{"reason", "too_many_nodes"}}, static_cast<double>(c.too_many_nodes.load()));
  waiting.Add({{"reason", "over_budget"}}, static_cast<double>(c.over_budget.load()));
}

}  // namespace gpusched
