#include "gpusched/codec/placeholder_codec.h"

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

void WriteExcluded(JsonWriter& w, const std::vector<std::string>& nodes) {
  w.BeginObject().Key("key").String("kubernetes.io/hostname").Key("operator").String("NotIn");
  w.Key("values").BeginArray();
  for (const std::string& n : nodes) w.String(n);
  w.EndArray().EndObject();
}

// The owner's required terms, each with the exclusion AND-ed in.
void WriteRequiredTerms(JsonWriter& w, const PlaceholderPod& pod) {
  w.BeginObject().Key("nodeSelectorTerms").BeginArray();
  for (const PodSelectorTermText& term : TermsToExtend(pod.copied.shape)) {
    WriteExtendedTerm(w, term, [&](JsonWriter& out) {
      if (!pod.excluded_nodes.empty()) WriteExcluded(out, pod.excluded_nodes);
    });
  }
  w.EndArray().EndObject();
}

void WriteResources(JsonWriter& w, const ResourceList& requests) {
  w.Key("resources").BeginObject().Key("requests").BeginObject();
  for (const ResourceAmount& r : requests) {
    if (r.milli > 0 && r.name != "pods") w.Key(r.name).String(QuantityOfMilli(r.milli));
  }
  // Extended resources (GPUs among them) cannot be overcommitted: their limits equal requests.
  w.EndObject().Key("limits").BeginObject();
  for (const ResourceAmount& r : requests) {
    if (r.milli > 0 && !IsNativeResource(r.name)) w.Key(r.name).String(QuantityOfMilli(r.milli));
  }
  w.EndObject().EndObject();
}

}  // namespace

std::string PlaceholderName(std::string_view owner_uid) {
  return std::string(kPlaceholderNamePrefix) + std::string(owner_uid);
}

std::string QuantityOfMilli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string EncodePlaceholderPod(const PlaceholderPod& pod) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("apiVersion").String("v1").Key("kind").String("Pod");
  w.Key("metadata").BeginObject();
  w.Key("name").String(PlaceholderName(pod.owner_uid));
  w.Key("namespace").String(pod.namespace_name);
  w.Key("labels").BeginObject().Key(kPlaceholderLabel).String(pod.owner_uid);
  w.Key("app.kubernetes.io/managed-by").String("gpusched").EndObject();
  w.Key("annotations").BeginObject();
  w.Key(kPlaceholderForAnnotation).String(pod.namespace_name + "/" + pod.owner_name);
  // A placeholder holds nothing worth keeping a node for.
  w.Key("cluster-autoscaler.kubernetes.io/safe-to-evict").String("true").EndObject();
  w.Key("ownerReferences").BeginArray().BeginObject();
  w.Key("apiVersion").String("v1").Key("kind").String("Pod");
  w.Key("name").String(pod.owner_name).Key("uid").String(pod.owner_uid);
  w.EndObject().EndArray();
  w.EndObject();  // metadata

  w.Key("spec").BeginObject();
  w.Key("priorityClassName").String(pod.priority_class);
  w.Key("terminationGracePeriodSeconds").Int(0);
  w.Key("automountServiceAccountToken").Bool(false);
  w.Key("enableServiceLinks").Bool(false);
  w.Key("restartPolicy").String("Always");
  if (!pod.copied.scheduler_name.empty()) {
    w.Key("schedulerName").String(pod.copied.scheduler_name);
  }
  if (!pod.copied.node_selector.empty()) w.Key("nodeSelector").Raw(pod.copied.node_selector);
  if (!pod.copied.tolerations.empty()) w.Key("tolerations").Raw(pod.copied.tolerations);
  w.Key("affinity").BeginObject().Key("nodeAffinity").BeginObject();
  w.Key("requiredDuringSchedulingIgnoredDuringExecution");
  WriteRequiredTerms(w, pod);
  if (!pod.copied.preferred.empty()) {
    w.Key("preferredDuringSchedulingIgnoredDuringExecution").Raw(pod.copied.preferred);
  }
  w.EndObject().EndObject();  // nodeAffinity, affinity
  w.Key("containers").BeginArray().BeginObject();
  w.Key("name").String("placeholder").Key("image").String(pod.image);
  WriteResources(w, pod.requests);
  w.EndObject().EndArray();
  w.EndObject();  // spec
  w.EndObject();
  return out;
}

}  // namespace gpusched
