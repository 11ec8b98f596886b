#include "adapters/apiserver/api_call.h"

namespace gfp::adapters::apiserver {

const char* VerbName(Verb verb) {
  switch (verb) {
    case Verb::kGet:
      return "get";
    case Verb::kList:
      return "list";
    case Verb::kWatch:
      return "watch";
    case Verb::kCreate:
      return "create";
    case Verb::kUpdate:
      return "update";
    case Verb::kPatch:
      return "patch";
    case Verb::kDelete:
      return "delete";
  }
  return "unknown verb";
}

const char* HttpMethod(Verb verb) {
  switch (verb) {
    case Verb::kGet:
    case Verb::kList:
    case Verb::kWatch:
      return "GET";
    case Verb::kCreate:
      return "POST";
    case Verb::kUpdate:
      return "PUT";
    case Verb::kPatch:
      return "PATCH";
    case Verb::kDelete:
      return "DELETE";
  }
  return "GET";
}

std::string Describe(const ApiCall& call) {
  return std::string(VerbName(call.verb)) + " " + call.resource;
}

Result<nlohmann::json> ApiAnswer::Json() const {
  // allow_exceptions = false: a parse error gives a discarded value instead of throwing.
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return DataLoss("the API server's answer to " + (request.empty() ? "a request" : request) +
                    " (HTTP " + std::to_string(code) + ", " + std::to_string(body.size()) +
                    " bytes) is not JSON");
  }
  return parsed;
}

}  // namespace gfp::adapters::apiserver
