// scenario.apps of the run configuration and the app parameter reference
// (app_params.h).
#include "config/app_params.h"

#include <algorithm>
#include <map>
#include <set>

#include "hal/hal.h"

namespace smmu_vp::config {

namespace {

// The names an app parameter's values go by (hal_param_decl.names).
std::vector<std::string> param_value_names(const hal_param_decl* decl) {
  std::vector<std::string> out;
  if (!decl || !decl->names) return out;
  std::string cur;
  for (const char* c = decl->names;; ++c) {
    if (*c == ',' || *c == 0) {
      out.push_back(cur);
      cur.clear();
      if (!*c) break;
    } else if (*c != ' ') {
      cur += *c;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

const hal_app* find_app(const std::string& name, const std::vector<const hal_app*>& apps, const std::string& path) {
  const hal_app* found = nullptr;
  std::string known;
  for (const hal_app* app : apps) {
    if (name == app->name) found = app;
    known += (known.empty() ? "" : ", ") + std::string(app->name);
  }
  if (!found) throw ConfigError(path + "/app", "no app named \"" + name + "\" (known: " + known + ")");
  return found;
}

// An app's cores: each one exists and runs no other app (`used`: the cores
// the apps before it took).
std::vector<unsigned> read_cores(const json& cores, const std::string& path, unsigned cpu_count, std::set<unsigned>& used) {
  if (cores.empty()) throw ConfigError(path + "/cores", "must name at least one core");
  std::vector<unsigned> out;
  for (size_t k = 0; k < cores.size(); ++k) {
    const auto c = static_cast<unsigned>(cores[k].get<uint64_t>());
    const std::string cp = path + "/cores/" + std::to_string(k);
    if (c >= cpu_count) throw ConfigError(cp, "core " + std::to_string(c) + " does not exist (cpu.count = " + std::to_string(cpu_count) + ")");
    if (!used.insert(c).second) throw ConfigError(cp, "core " + std::to_string(c) + " already runs another app");
    out.push_back(c);
  }
  return out;
}

const hal_param_decl* find_param(const hal_app* app, const std::string& name) {
  const hal_param_decl* decl = nullptr;
  for (const hal_param_decl* p = app->params; p && p->name; ++p)
    if (name == p->name) decl = p;
  return decl;
}

// One parameter's value, given as a number or as one of the names of its
// values (hal_param_decl.names); at most its max, when it has one.
uint64_t read_app_param(const hal_app* app, const hal_param_decl* decl, const json& value, const std::string& path) {
  const std::string name = app->name;
  uint64_t v = 0;
  if (value.is_string()) {
    const std::string want = value.get<std::string>();
    const std::vector<std::string> names = param_value_names(decl);
    const auto found = std::find(names.begin(), names.end(), want);
    if (found == names.end())
      throw ConfigError(path, "app \"" + name + "\": " + decl->name + " = \"" + want + "\" is not a value it names" +
                                  (names.empty() ? " (it takes numbers only)" : " (one of: " + join(names) + ")"));
    v = static_cast<uint64_t>(found - names.begin());
  } else {
    v = value.get<uint64_t>();
  }
  if (decl->max && v > decl->max)
    throw ConfigError(path, "app \"" + name + "\": " + decl->name + " = " + std::to_string(v) + " is out of range (0 to " +
                                std::to_string(decl->max) + ": " + decl->help + ")");
  return v;
}

// Every parameter the app declares: its default, or the value `given` names.
std::map<std::string, uint64_t> read_app_params(const hal_app* app, const json& given, const std::string& path) {
  std::map<std::string, uint64_t> params;
  for (const hal_param_decl* p = app->params; p && p->name; ++p) params[p->name] = p->default_value;
  for (auto it = given.begin(); it != given.end(); ++it) {
    const std::string ppath = path + "/params/" + it.key();
    if (!params.count(it.key())) {
      std::string declared;
      for (const auto& [k, v] : params) declared += (declared.empty() ? "" : ", ") + k;
      throw ConfigError(ppath, "app \"" + std::string(app->name) + "\" has no such parameter (it has: " +
                                   (declared.empty() ? "none" : declared) + ")");
    }
    params[it.key()] = read_app_param(app, find_param(app, it.key()), it.value(), ppath);
  }
  return params;
}

}  // namespace

void read_apps(RunConfig& rc, const std::vector<const hal_app*>& apps) {
  const json& list = rc.resolved["scenario"]["apps"];
  std::set<unsigned> used_cores;
  std::map<std::string, std::string> names;  // instance name -> where it was given
  for (size_t i = 0; i < list.size(); ++i) {
    const json& a = list[i];
    const std::string path = "/scenario/apps/" + std::to_string(i);
    AppAssignment as;
    as.app = find_app(a["app"].get<std::string>(), apps, path);
    for (const AppAssignment& before : rc.apps) as.instance += before.app == as.app;
    as.name = a["name"].get<std::string>();
    if (as.name.empty())
      as.name = as.instance == 0 ? std::string(as.app->name) : std::string(as.app->name) + "_" + std::to_string(as.instance);
    else if (as.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos)
      throw ConfigError(path + "/name", "\"" + as.name + "\": an instance name is letters, digits and _ (it becomes sw.<name>.*)");
    if (const auto [it, fresh] = names.emplace(as.name, path); !fresh)
      throw ConfigError(path + "/name", "results name \"" + as.name + "\" is already " + it->second +
                                            "'s: give one of them another \"name\"");
    as.cores = read_cores(a["cores"], path, rc.cpu.count, used_cores);
    as.params = read_app_params(as.app, a["params"], path);
    rc.resolved["scenario"]["apps"][i]["params"] = as.params;
    rc.resolved["scenario"]["apps"][i]["name"] = as.name;
    rc.apps.push_back(std::move(as));
  }
}

std::string render_app_params_reference(const std::vector<const hal_app*>& apps) {
  std::string out = "\n### App parameters (`scenario.apps.N.params`)\n";
  for (const hal_app* app : apps) {
    out += "\n`" + std::string(app->name) + "`: " + app->summary + "\n\n";
    if (!app->params || !app->params->name) {
      out += "No parameters.\n";
      continue;
    }
    out += "| parameter | default | range | description |\n|---|---|---|---|\n";
    for (const hal_param_decl* p = app->params; p->name; ++p)
      out += "| `" + std::string(p->name) + "` | " + std::to_string(p->default_value) + " | " +
             (p->names ? join(param_value_names(p)) + " (" : "") + (p->max ? "0 to " + std::to_string(p->max) : "any") +
             (p->names ? ")" : "") + " | " + p->help + " |\n";
  }
  return out;
}

}  // namespace smmu_vp::config
