#pragma once

// TLS identities as net/ hands them to listeners and dialers. No Boost here:
// actors and apps include this; the OpenSSL contexts live in tls.cpp.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace actor_host::net {

/// An OpenSSL context (asio ssl::context); defined in net/detail/flex_stream.hpp.
struct tls_context_box;

/// The files of a TLS listener (Karmada's model).
struct tls_server_files {
  std::string cert_file;      // PEM chain, leaf first
  std::string key_file;       // PEM private key of the leaf
  /// Non-empty: clients must present a certificate signed by one of these
  /// CAs (mTLS); the handshake fails otherwise.
  std::string client_ca_file;
  /// Client certificates are requested (the CA names above are offered as a
  /// hint) but neither required nor verified: any certificate or none is
  /// accepted. For rolling mTLS out; never an access control.
  bool skip_client_verify = false;
};

/// What a TLS dialer (wss://, https://) trusts and presents.
struct tls_client_files {
  std::string ca_file;   // PEM CAs the server's chain must end in; empty: system store
  std::string cert_file; // optional client certificate (mTLS), PEM chain
  std::string key_file;  // its key
};

/// The server context shared by the listeners, replaceable while they run:
/// each handshake takes the context current when it starts, so a reload
/// never touches connections already established.
class tls_server_context {
public:
  /// Loads the files; nullptr and `error` on failure.
  static std::shared_ptr<tls_server_context> load(tls_server_files files, std::string& error);

  /// Loads the files again (SIGHUP). On failure the current context stays
  /// and the reason is returned.
  std::string reload();

  const tls_server_files& files() const {
    return files_;
  }
  bool verifies_clients() const {
    return !files_.client_ca_file.empty() && !files_.skip_client_verify;
  }

  std::shared_ptr<tls_context_box> current() const;

  explicit tls_server_context(tls_server_files files) : files_(std::move(files)) {
  }

private:
  tls_server_files files_;
  mutable std::mutex mtx_;
  std::shared_ptr<tls_context_box> current_;
};

using tls_server_context_ptr = std::shared_ptr<tls_server_context>;

/// A client context, built once per dialer.
class tls_client_context {
public:
  static std::shared_ptr<const tls_client_context> load(const tls_client_files& files,
                                                        std::string& error);
  std::shared_ptr<tls_context_box> box;
};

using tls_client_context_ptr = std::shared_ptr<const tls_client_context>;

} // namespace actor_host::net
