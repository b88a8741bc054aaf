#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace valijson {
class ValidationResults;
}

/// ajv's error wording and order, as Genkit reports schema failures: turns
/// valijson's report into ajv's messages ("must have required property
/// 'x'"), sorted and trimmed the way ajv (allErrors off) reports them.
/// Internal to schema/; json_schema::validate() is the public face, and
/// schema_error_message() (json_schema.hpp) the Genkit text around it.
namespace actor_host::schema::ajv {

/// ajv's keyword order at one schema node (its message rank).
enum : int { r_type = 0, r_any = 1, r_number = 2, r_string = 3, r_array = 4, r_object = 5 };

/// An error reported inside branch `index` of the `keyword` (anyOf/oneOf)
/// at depth `depth` of its instance path.
struct branch {
  size_t depth;
  std::string keyword;
  long index;
};

/// One error: where, ajv's message, and what orders it among the others.
struct failure {
  std::vector<std::string> path{};
  std::string message{}; // valijson's description, then ajv's message
  int rank = 9; // ajv's keyword order at one node
  int self = -1; // its index in valijson's report (unique)
  int parent = -1; // `self` of the innermost failed anyOf/oneOf it is part of
  bool head = false; // it is such an anyOf/oneOf failure
  std::vector<branch> branches{}; // outermost first
  std::vector<long> key{};
};

/// valijson's report, in its order: paths without "<root>", descriptions
/// untranslated, and for errors inside a failed anyOf/oneOf the branch.
std::vector<failure> read_report(valijson::ValidationResults& results);

/// Schema node and sort key (ajv's evaluation order) for an instance path;
/// `branches` (outermost first) say which anyOf/oneOf branch to follow.
const boost::json::value* locate(const boost::json::value& root,
                                 const boost::json::value& instance,
                                 const std::vector<std::string>& path,
                                 const std::vector<branch>& branches, std::vector<long>& key);

/// valijson's description `d` (at schema node `s`) → ajv's message and
/// keyword rank; false = a summary of nested errors ajv does not have (drop it).
bool translate(std::string_view d, const boost::json::value* s, std::string& msg, int& rank);

/// Sorts into ajv's order: depth-first, a node's own keywords (by rank)
/// before its children, children in `properties` order, a failed anyOf after
/// its branches' errors (by branch). Unless `all`, keeps what ajv reports with
/// allErrors off (as Genkit runs it): the first failure only, and inside a
/// failed anyOf/oneOf only the first failure of each branch.
void order_like_ajv(std::vector<failure>& found, bool all, const boost::json::value& doc,
                    const boost::json::value& instance);

/// ajv's instancePath, dotted as Genkit prints it: "customer.address",
/// "items.0.qty", or "(root)".
std::string dotted(const std::vector<std::string>& path);

} // namespace actor_host::schema::ajv
