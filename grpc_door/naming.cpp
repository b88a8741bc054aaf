#include "grpc_door/naming.hpp"

#include <cctype>

namespace actor_host::grpc_door {

std::string proto_identifier(std::string_view s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out.insert(out.begin(), '_');
  return out;
}

std::string camel_name(std::string_view s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out.insert(out.begin(), 'T');
  return out;
}

std::string unique_name(const std::string& base, std::set<std::string>& taken) {
  auto name = base;
  for (int n = 2; taken.count(name) != 0; ++n)
    name = base + "_" + std::to_string(n);
  taken.insert(name);
  return name;
}

} // namespace actor_host::grpc_door
