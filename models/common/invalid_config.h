// What a model's constructor throws when its configuration struct holds a
// value the model cannot be built with: the field, as a dotted path inside
// the struct (e.g. "translation.tlb.ways"), and why. A platform that embeds
// the models catches it; ours turns it into the JSON path of the parameter.
#pragma once

#include <stdexcept>
#include <string>

namespace smmu_vp {

class InvalidConfig : public std::invalid_argument {
 public:
  InvalidConfig(const std::string& field, const std::string& reason)
      : std::invalid_argument(field + ": " + reason), field_(field), reason_(reason) {}
  const std::string& field() const { return field_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string field_;
  std::string reason_;
};

}  // namespace smmu_vp
