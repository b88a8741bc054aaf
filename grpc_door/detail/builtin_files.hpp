#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace google::protobuf {
class DescriptorPool;
}

namespace actor_host::grpc_door::detail {

/// The services every listener serves besides the catalog's, sorted.
const std::vector<std::string>& builtin_services();

/// Their files (health, reflection v1 and v1alpha), for reflection.
const google::protobuf::DescriptorPool& builtin_descriptors();

} // namespace actor_host::grpc_door::detail
