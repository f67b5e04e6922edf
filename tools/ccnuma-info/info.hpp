#pragma once
// ccnuma-info's units: text.cpp writes the report for people, json.cpp the JSON document;
// main.cpp reads the command line and loads the topology.

#include <ccnuma/ccnuma.hpp>
#include <ccnuma/emulated_machine.hpp>

#include <string>
#include <vector>

namespace tools::info {

void print_text(const ccnuma::topology& t, const ccnuma::kernel_settings& k, const std::vector<std::string>& warnings,
                bool tree);
void print_json(const ccnuma::topology& t, const ccnuma::kernel_settings& k, const std::vector<std::string>& warnings);

}  // namespace tools::info
