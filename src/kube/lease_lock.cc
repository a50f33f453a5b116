#include "gpusched/kube/lease_lock.h"

#include <simdjson.h>

#include <ctime>

#include "gpusched/codec/json_writer.h"

namespace gpusched {
namespace {

// What a Lease says of its holder (a Lease of an unexpected shape reads as empty fields).
struct LeaseRecord {
  std::string resource_version;
  std::string holder;
  std::string renew_time;
  std::string acquire_time;
  int64_t duration_seconds = 0;
  int64_t transitions = 0;
};

LeaseRecord ReadLease(const std::string& body) {
  LeaseRecord r;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(body).get(root) != simdjson::SUCCESS) return r;
  auto text = [&](const char* pointer, std::string& out) {
    std::string_view v;
    if (root.at_pointer(pointer).get(v) == simdjson::SUCCESS) out = v;
  };
  text("/metadata/resourceVersion", r.resource_version);
  text("/spec/holderIdentity", r.holder);
  text("/spec/renewTime", r.renew_time);
  text("/spec/acquireTime", r.acquire_time);
  int64_t n = 0;
  if (root.at_pointer("/spec/leaseDurationSeconds").get(n) == simdjson::SUCCESS) {
    r.duration_seconds = n;
  }
  if (root.at_pointer("/spec/leaseTransitions").get(n) == simdjson::SUCCESS) r.transitions = n;
  return r;
}

}  // namespace

std::string MicroTimeNow() {
  auto now = std::chrono::system_clock::now();
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  char out[72];
  std::snprintf(out, sizeof out, "%s.%06lldZ", buf, static_cast<long long>(micros % 1'000'000));
  return out;
}

LeaseLock::LeaseLock(ApiClient& client, LeaseLockOptions options)
    : client_(client), options_(std::move(options)) {}

std::string LeaseLock::Path() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + options_.namespace_name + "/leases/" +
         options_.name;
}

std::string LeaseLock::Body(const std::string& resource_version, const std::string& acquire_time,
                            int64_t transitions) const {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("apiVersion").String("coordination.k8s.io/v1").Key("kind").String("Lease");
  w.Key("metadata").BeginObject().Key("name").String(options_.name);
  w.Key("namespace").String(options_.namespace_name);
  if (!resource_version.empty()) w.Key("resourceVersion").String(resource_version);
  w.EndObject();
  w.Key("spec").BeginObject().Key("holderIdentity").String(options_.identity);
  w.Key("leaseDurationSeconds").Int(options_.duration.count());
  w.Key("acquireTime").String(acquire_time).Key("renewTime").String(MicroTimeNow());
  w.Key("leaseTransitions").Int(transitions);
  w.EndObject().EndObject();
  return out;
}

bool LeaseLock::Refresh(Clock::time_point now) {
  auto fail = [&](std::string error) {
    last_error_ = std::move(error);
    if (held_ && now - renewed_at_ > options_.duration) held_ = false;
    return held_;
  };
  auto took = [&] {
    held_ = true;
    renewed_at_ = now;
    last_error_.clear();
    return true;
  };
  HttpResult got = client_.Get(Path());
  if (!got.error.empty()) return fail("reading the Lease: " + got.failure());
  if (got.status == 404) {
    acquire_time_ = MicroTimeNow();
    HttpResult created =
        client_.Send("POST", Path().substr(0, Path().rfind('/')), Body("", acquire_time_, 0));
    if (created.status == 201) return took();
    held_ = false;
    if (created.status == 409) {  // another replica created it first
      last_error_.clear();
      return false;
    }
    return fail("creating the Lease: " + created.failure());
  }
  if (got.status != 200) return fail("reading the Lease: " + got.failure());
  LeaseRecord lease = ReadLease(got.body);
  std::string record = lease.holder + "|" + lease.renew_time;
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = now;
  }
  bool mine = lease.holder == options_.identity;
  std::chrono::seconds duration(lease.duration_seconds > 0 ? lease.duration_seconds
                                                           : options_.duration.count());
  if (!mine && !lease.holder.empty() && now < observed_at_ + duration) {
    held_ = false;
    last_error_.clear();
    return false;
  }
  if (!mine) acquire_time_ = MicroTimeNow();
  if (mine && acquire_time_.empty()) acquire_time_ = lease.acquire_time;
  HttpResult put =
      client_.Send("PUT", Path(),
                   Body(lease.resource_version, acquire_time_, lease.transitions + (mine ? 0 : 1)));
  if (put.status == 200) return took();
  if (put.status == 409) {  // another replica wrote first
    held_ = false;
    last_error_.clear();
    return false;
  }
  return fail("renewing the Lease: " + put.failure());
}

void LeaseLock::Release() {
  if (!held_) return;
  held_ = false;
  HttpResult got = client_.Get(Path());
  if (got.status != 200) return;
  LeaseRecord lease = ReadLease(got.body);
  if (lease.holder != options_.identity) return;
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("apiVersion").String("coordination.k8s.io/v1").Key("kind").String("Lease");
  w.Key("metadata").BeginObject().Key("name").String(options_.name);
  w.Key("namespace").String(options_.namespace_name);
  w.Key("resourceVersion").String(lease.resource_version).EndObject();
  // A holder of "" and a duration of 1 s: the others take it at their next look.
  w.Key("spec").BeginObject().Key("holderIdentity").String("").Key("leaseDurationSeconds").Int(1);
  w.Key("renewTime").String(MicroTimeNow()).Key("leaseTransitions").Int(lease.transitions);
  w.EndObject().EndObject();
  client_.Send("PUT", Path(), out);
}

}  // namespace gpusched
