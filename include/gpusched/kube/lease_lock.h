// LeaseLock: one writer among gpusched's replicas, elected on a coordination.k8s.io/v1 Lease the
// way Kubernetes' own controllers elect theirs: the holder renews the Lease's renewTime every few
// seconds; another replica takes it over (an update conditioned on the resourceVersion it read)
// once the Lease record has not changed for leaseDurationSeconds by its own clock, so clocks
// need not agree. A holder that cannot renew for a lease duration stops writing.
//
// Used by one thread (it owns no lock); the ApiClient is the caller's and outlives the lock.
#pragma once

#include <chrono>
#include <string>

#include "gpusched/kube/api_client.h"

namespace gpusched {

struct LeaseLockOptions {
  std::string namespace_name;
  std::string name;
  std::string identity;  // this replica's, unique among them (its pod name and a random part)
  std::chrono::seconds duration{15};
};

class LeaseLock {
 public:
  using Clock = std::chrono::steady_clock;
  LeaseLock(ApiClient& client, LeaseLockOptions options);

  // Reads the Lease and takes or renews it when it may; whether this replica holds it now. Call
  // it every duration / 3 or so. An unreadable Lease or API error keeps the last answer until
  // a lease duration passed since the last successful renewal.
  bool Refresh(Clock::time_point now);
  // Gives the Lease up (clears its holder), so another replica takes over at once; on shutdown.
  void Release();

  bool held() const { return held_; }
  const std::string& last_error() const { return last_error_; }
  const LeaseLockOptions& options() const { return options_; }

 private:
  std::string Path() const;
  // The Lease naming this replica the holder; `resource_version` empty for a create.
  std::string Body(const std::string& resource_version, const std::string& acquire_time,
                   int64_t transitions) const;

  ApiClient& client_;
  LeaseLockOptions options_;
  bool held_ = false;
  Clock::time_point renewed_at_{};   // the last successful renewal
  std::string observed_record_;      // holder and renewTime as last read
  Clock::time_point observed_at_{};  // when that record was first seen
  std::string acquire_time_;         // when this replica took the Lease
  std::string last_error_;
};

// The current time as a Kubernetes MicroTime ("2026-11-29T05:48:15.123456Z").
std::string MicroTimeNow();

}  // namespace gpusched
