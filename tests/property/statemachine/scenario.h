// A random but reproducible sequence of plugin commands against a node fixture, with a model of
// Fabric Manager that answers effects (sometimes failing) — the pure half of the simulator.
#pragma once

#include <rapidcheck.h>

#include <string>
#include <vector>

#include "common/sm_fixtures.h"

namespace gfp::testing {

// One step a scenario takes: a command plus how FM answers the effects it leads to.
struct Step {
  sm::Command command;
  std::vector<int> fm_codes;  // consumed in order by effects; 0 when exhausted
  std::string label;
};

// Generates a scenario of `steps` steps for `node`.
rc::Gen<std::vector<Step>> GenScenario(const NodeFixture& node, bool fm_enabled);

// Runs steps through the driver (which checks invariants after every event). Returns, for every
// decision committed, the journal length after it: the transaction boundaries.
std::vector<std::size_t> RunScenario(Driver& driver, const NodeFixture& node, bool fm_enabled,
                                     const std::vector<Step>& steps);

std::string FmName(int code);

}  // namespace gfp::testing
