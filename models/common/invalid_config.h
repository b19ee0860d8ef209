// What a model's constructor throws when its configuration struct holds a
// value the model cannot be built with: the field, as a dotted path inside
// the struct (e.g. "translation.tlb.ways"), and why. A platform that embeds
// the models catches it; ours turns it into the JSON path of the parameter.
#pragma once

#include <cmath>
#include <cstdint>
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

// For a module's initialiser list, sc_module(validated_name(name, cfg)):
// checks `cfg` before the module exists, so that a bad configuration leaves
// nothing half-made in the SystemC hierarchy.
template <class Name, class Config>
const Name& validated_name(const Name& name, const Config& cfg) {
  cfg.validate();
  return name;
}

// The checks the models' validate() functions are made of; each throws
// InvalidConfig naming `field`.
namespace check {

inline void require(bool ok, const std::string& field, const std::string& reason) {
  if (!ok) throw InvalidConfig(field, reason);
}
// A count of slots, lanes, queues, ...: at least 1.
inline void at_least_one(uint64_t n, const std::string& field) { require(n >= 1, field, "must be at least 1"); }
// A time or latency: finite, 0 or more.
inline void time(double t, const std::string& field) {
  require(std::isfinite(t) && t >= 0, field, "must be a time of 0 or more, not " + std::to_string(t));
}
// A rate or bandwidth: finite and more than 0.
inline void rate(double r, const std::string& field) {
  require(std::isfinite(r) && r > 0, field, "must be more than 0, not " + std::to_string(r));
}

}  // namespace check

}  // namespace smmu_vp
