#include "net/tls.hpp"

#include "net/detail/flex_stream.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/host_name_verification.hpp>

namespace actor_host::net {

namespace ssl = boost::asio::ssl;

namespace {

// asio's error for a bad PEM file is OpenSSL's reason alone ("no start
// line"); the person fixing it needs the file too.
std::string describe(const std::string& what, const std::string& file,
                     const boost::system::error_code& ec) {
  return "cannot load " + what + " " + file + ": " + ec.message();
}

std::shared_ptr<tls_context_box> make_server_box(const tls_server_files& f, std::string& error) {
  if (f.cert_file.empty() || f.key_file.empty()) {
    error = "TLS needs both tls_cert_file and tls_key_file";
    return nullptr;
  }
  auto box = std::make_shared<tls_context_box>(ssl::context::tls_server);
  auto& ctx = box->ctx;
  harden(ctx);
  boost::system::error_code ec;
  if (ctx.use_certificate_chain_file(f.cert_file, ec); ec) {
    error = describe("tls_cert_file", f.cert_file, ec);
    return nullptr;
  }
  if (ctx.use_private_key_file(f.key_file, ssl::context::pem, ec); ec) {
    error = describe("tls_key_file", f.key_file, ec);
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
    ERR_clear_error();
    error = "tls_key_file " + f.key_file + " does not match the certificate in " + f.cert_file;
    return nullptr;
  }
  if (!f.client_ca_file.empty()) {
    if (ctx.load_verify_file(f.client_ca_file, ec); ec) {
      error = describe("tls_client_ca_file", f.client_ca_file, ec);
      return nullptr;
    }
    // The CA names a client is told to pick its certificate by.
    if (auto* names = SSL_load_client_CA_file(f.client_ca_file.c_str()))
      SSL_CTX_set_client_CA_list(ctx.native_handle(), names);
    ERR_clear_error();
  }
  if (f.skip_client_verify) {
    ctx.set_verify_mode(ssl::verify_peer, ec);
    ctx.set_verify_callback([](bool, ssl::verify_context&) { return true; }, ec);
  } else if (!f.client_ca_file.empty()) {
    ctx.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert, ec);
  } else {
    ctx.set_verify_mode(ssl::verify_none, ec);
  }
  return box;
}

} // namespace

void harden(ssl::context& ctx) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                  | ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1
                  | ssl::context::single_dh_use | ssl::context::no_compression);
}

void verify_server_name(flex_stream::tls_layer& s, const std::string& host) {
  SSL_set_tlsext_host_name(s.native_handle(), host.c_str());
  boost::system::error_code ec;
  s.set_verify_mode(ssl::verify_peer, ec);
  s.set_verify_callback(ssl::host_name_verification(host), ec);
}

std::string describe_tls_error(const boost::system::error_code& ec, flex_stream::tls_layer* s) {
  std::string out = ec.message();
  if (s != nullptr) {
    auto v = SSL_get_verify_result(s->native_handle());
    if (v != X509_V_OK)
      out += " (" + std::string{X509_verify_cert_error_string(v)} + ")";
  }
  return out;
}

std::shared_ptr<tls_server_context> tls_server_context::load(tls_server_files files,
                                                              std::string& error) {
  auto box = make_server_box(files, error);
  if (!box)
    return nullptr;
  auto out = std::make_shared<tls_server_context>(std::move(files));
  out->current_ = std::move(box);
  return out;
}

std::string tls_server_context::reload() {
  std::string error;
  auto box = make_server_box(files_, error);
  if (!box)
    return error;
  std::lock_guard<std::mutex> g{mtx_};
  current_ = std::move(box);
  return {};
}

std::shared_ptr<tls_context_box> tls_server_context::current() const {
  std::lock_guard<std::mutex> g{mtx_};
  return current_;
}

std::shared_ptr<const tls_client_context> tls_client_context::load(const tls_client_files& f,
                                                                   std::string& error) {
  auto box = std::make_shared<tls_context_box>(ssl::context::tls_client);
  auto& ctx = box->ctx;
  harden(ctx);
  boost::system::error_code ec;
  if (f.ca_file.empty())
    ctx.set_default_verify_paths(ec);
  else
    ctx.load_verify_file(f.ca_file, ec);
  if (ec) {
    error = f.ca_file.empty() ? "cannot load the system CA store: " + ec.message()
                              : describe("--tls-ca-file", f.ca_file, ec);
    return nullptr;
  }
  if (f.cert_file.empty() != f.key_file.empty()) {
    error = "a client certificate needs both --tls-cert-file and --tls-key-file";
    return nullptr;
  }
  if (!f.cert_file.empty()) {
    if (ctx.use_certificate_chain_file(f.cert_file, ec); ec) {
      error = describe("--tls-cert-file", f.cert_file, ec);
      return nullptr;
    }
    if (ctx.use_private_key_file(f.key_file, ssl::context::pem, ec); ec) {
      error = describe("--tls-key-file", f.key_file, ec);
      return nullptr;
    }
  }
  ctx.set_verify_mode(ssl::verify_peer, ec);
  auto out = std::make_shared<tls_client_context>();
  out->box = std::move(box);
  return out;
}

} // namespace actor_host::net
