#include "gpusched/server/tls_credentials.h"

#include <optional>
#include <vector>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include "gpusched/util/file_change.h"
#include "gpusched/util/file_text.h"
#include "gpusched/util/input_error.h"

namespace gpusched {

struct TlsCredentials::Loaded {
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  X509_STORE* client_store = nullptr;            // null without a client CA
  STACK_OF(X509_NAME) * client_names = nullptr;  // sent in the CertificateRequest

  Loaded() = default;
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
  ~Loaded() {
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    X509_STORE_free(client_store);
    sk_X509_NAME_pop_free(client_names, X509_NAME_free);
  }
};

namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

std::string ReadPem(const std::string& path) {
  return ReadFileText(path, kMaxPemFileBytes, "PEM file");
}

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

// Every certificate in a PEM text, in order.
std::vector<X509*> ReadCertificates(const std::string& text, const std::string& path) {
  BioPtr bio = MemoryBio(text);
  std::vector<X509*> certs;
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certs.push_back(c);
  ERR_clear_error();  // the loop ends on "no start line"
  if (certs.empty()) throw InputError(path + ": no PEM certificate");
  return certs;
}

struct Texts {
  std::string cert, key, client_ca;
};

std::shared_ptr<const TlsCredentials::Loaded> Parse(const TlsFiles& files, const Texts& texts) {
  auto loaded = std::make_shared<TlsCredentials::Loaded>();
  std::vector<X509*> certs = ReadCertificates(texts.cert, files.cert);
  loaded->cert = certs[0];
  loaded->chain = sk_X509_new_null();
  for (size_t i = 1; i < certs.size(); ++i) sk_X509_push(loaded->chain, certs[i]);

  BioPtr key_bio = MemoryBio(texts.key);
  loaded->key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (!loaded->key) throw InputError(files.key + ": no PEM private key: " + OpenSslError());
  if (X509_check_private_key(loaded->cert, loaded->key) != 1) {
    ERR_clear_error();
    throw InputError(files.key + ": key does not match the certificate in " + files.cert);
  }
  if (files.client_ca.empty()) return loaded;
  loaded->client_store = X509_STORE_new();
  loaded->client_names = sk_X509_NAME_new_null();
  for (X509* ca : ReadCertificates(texts.client_ca, files.client_ca)) {
    X509_STORE_add_cert(loaded->client_store, ca);
    sk_X509_NAME_push(loaded->client_names, X509_NAME_dup(X509_get_subject_name(ca)));
    X509_free(ca);
  }
  return loaded;
}

// The texts of the certificate, key and client CA files (those watched) as last read; nullopt when
// one of them could not be read.
std::optional<Texts> LastTexts(const std::vector<FileChange>& watched) {
  for (const FileChange& f : watched) {
    if (!f.last()->read()) return std::nullopt;
  }
  auto text = [&](size_t i) { return i < watched.size() ? watched[i].last()->text : ""; };
  return Texts{text(0), text(1), text(2)};
}

}  // namespace

TlsCredentials::TlsCredentials(TlsFiles files, std::chrono::milliseconds reload_interval)
    : files_(std::move(files)) {
  for (const std::string* path : {&files_.cert, &files_.key, &files_.client_ca}) {
    if (path == &files_.client_ca && path->empty()) continue;  // clients are not asked
    watched_.emplace_back(*path, ReadPem);
    const FileChange::Look* look = watched_.back().Check();
    ThrowIfAny(look->problems);
  }
  current_ = Parse(files_, *LastTexts(watched_));
  reloading_.emplace(reload_interval, [this] { CheckOnce(); });
}

// The re-reads stop before the files and credentials they use go.
TlsCredentials::~TlsCredentials() { reloading_.reset(); }

std::shared_ptr<const TlsCredentials::Loaded> TlsCredentials::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void TlsCredentials::Configure(SSL_CTX& ctx) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  auto loaded = Current();
  if (SSL_CTX_use_certificate(&ctx, loaded->cert) != 1 ||
      SSL_CTX_use_PrivateKey(&ctx, loaded->key) != 1) {
    throw InputError(files_.cert + ": cannot install the certificate: " + OpenSslError());
  }
  if (!files_.client_ca.empty()) {
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  SSL_CTX_set_cert_cb(&ctx, &TlsCredentials::OnHandshake, this);
}

// Runs in the handshake of every connection, before the server sends its certificate: installs
// the credentials in force now on this connection only.
int TlsCredentials::OnHandshake(SSL* ssl, void* self) {
  auto loaded = static_cast<TlsCredentials*>(self)->Current();
  if (SSL_use_cert_and_key(ssl, loaded->cert, loaded->key, loaded->chain, 1) != 1) return 0;
  if (loaded->client_store) {
    // The SSL object takes its own references, so a later reload cannot free what it uses.
    SSL_set1_verify_cert_store(ssl, loaded->client_store);
    STACK_OF(X509_NAME)* names = SSL_dup_CA_list(loaded->client_names);
    SSL_set_client_CA_list(ssl, names);
  }
  return 1;
}

void TlsCredentials::CheckOnce() {
  bool changed = false;
  for (FileChange& f : watched_) changed |= f.Check() != nullptr;  // every file looked at
  if (!changed) return;
  // A Secret update swaps files; a read between the two swaps is retried once the file changes.
  std::optional<Texts> texts = LastTexts(watched_);
  if (!texts) return;
  try {
    auto loaded = Parse(files_, *texts);
    {
      std::lock_guard lock(mu_);
      current_ = std::move(loaded);
    }
    ++reloads_;
    spdlog::info("TLS: reloaded the certificate from {}", files_.cert);
  } catch (const InputError& e) {
    ++failures_;
    spdlog::error("TLS: reload failed, keeping the previous certificate: {}", e.what());
  }
}

}  // namespace gpusched
