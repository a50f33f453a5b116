// TlsCredentials: the serving certificate, its key and an optional client CA, read from PEM files
// and re-read when the files change, so a rotated certificate (cert-manager, a renewed Secret)
// is served without a restart.
//
// Configure() prepares an OpenSSL server context (the transport's): every handshake picks up the
// credentials in force at that moment; with a client CA, a client must present a certificate signed
// by it or the handshake fails. A reload that fails (unreadable file, bad PEM, key not matching the
// certificate) is logged and the last good credentials stay in force. The polling thread stops in
// the destructor; the object must outlive every server context configured with it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/util/file_change.h"
#include "gpusched/util/periodic.h"

// OpenSSL's SSL_CTX and SSL, named by pointer only: including this header does not pull OpenSSL's
// headers; the server's .cc files that use the objects include them.
struct ssl_ctx_st;
struct ssl_st;

namespace gpusched {

// Largest certificate, key or CA bundle file read (the public CA bundles are below 1 MiB).
inline constexpr size_t kMaxPemFileBytes = size_t{16} << 20;

struct TlsFiles {
  std::string cert;       // PEM: the certificate, then any intermediates
  std::string key;        // PEM private key
  std::string client_ca;  // PEM bundle; empty: clients are not asked for a certificate
};

class TlsCredentials {
 public:
  // Loads the files; throws InputError (gpusched/util/input_error.h) naming the file that failed.
  TlsCredentials(TlsFiles files, std::chrono::milliseconds reload_interval);
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  // Installs the handshake hooks in `ctx`. Throws InputError naming the certificate file and
  // OpenSSL's reason when it cannot.
  void Configure(ssl_ctx_st& ctx);

  uint64_t reloads() const { return reloads_.load(); }
  uint64_t failures() const { return failures_.load(); }

  struct Loaded;  // parsed OpenSSL objects; defined in the .cc

 private:
  static int OnHandshake(ssl_st* ssl, void* self);
  std::shared_ptr<const Loaded> Current() const;
  void CheckOnce();

  TlsFiles files_;
  std::vector<FileChange> watched_;  // cert, key, client CA (if any); the re-reading thread's
  mutable std::mutex mu_;            // guards current_; held only for pointer copies
  std::shared_ptr<const Loaded> current_;
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> failures_{0};
  std::optional<PeriodicThread> reloading_;  // started once the files are loaded
};

}  // namespace gpusched
