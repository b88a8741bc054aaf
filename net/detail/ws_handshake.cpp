#include "net/detail/ws_handshake.hpp"

#include <boost/beast/http/field.hpp>

#include <openssl/evp.h>

namespace actor_host::net::detail {

namespace http = boost::beast::http;

std::string ws_accept_key(std::string_view key) {
  static constexpr std::string_view guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  std::string in{key};
  in += guid;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(in.data(), in.size(), md, &len, EVP_sha1(), nullptr);
  unsigned char out[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(out, md, static_cast<int>(len));
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

std::string ws_handshake_response(const http_request_message& req, bool& ok) {
  ok = false;
  auto refuse = [](int status, std::string_view phrase, std::string_view why,
                   std::string_view extra) {
    std::string body = std::string{why} + "\n";
    return "HTTP/1.1 " + std::to_string(status) + " " + std::string{phrase}
           + "\r\nServer: actor-host\r\nConnection: close\r\nContent-Type: text/plain\r\n"
           + std::string{extra} + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n"
           + body;
  };
  if (req.find(http::field::host) == req.end())
    return refuse(400, "Bad Request", "no Host header", "");
  auto version = req[http::field::sec_websocket_version];
  if (version.empty())
    return refuse(400, "Bad Request", "no Sec-WebSocket-Version header", "");
  if (version != "13")
    return refuse(426, "Upgrade Required", "WebSocket version 13 only",
                  "Sec-WebSocket-Version: 13\r\n");
  auto key = req[http::field::sec_websocket_key];
  // 16 bytes in base64 (§4.1): 22 characters and "==".
  if (key.size() != 24 || key.substr(22) != "==")
    return refuse(400, "Bad Request", "bad Sec-WebSocket-Key header", "");
  ok = true;
  return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Accept: "
         + ws_accept_key(key) + "\r\nServer: actor-host\r\n\r\n";
}

} // namespace actor_host::net::detail
