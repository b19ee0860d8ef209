// `smmu-vp sweep plan` and `sweep collect`: the jobs a plan writes, that a
// point run from its job gives the local runner's results, how collect names
// failed and missing points, and the errors for bad input. GNU parallel and
// SLURM run plans in tests/sweep/.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

using namespace cli_test;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Runs every line of DIR/jobs.txt with sh, as an engine would, from another
// working directory; returns the exit codes.
std::vector<int> run_jobs(const fs::path& dir) {
  std::vector<int> codes;
  for (const std::string& line : lines_of(read_text(dir / "jobs.txt"))) codes.push_back(shell("cd / && " + line).exit_code);
  return codes;
}

nlohmann::json without_wallclock(nlohmann::json j) {
  j.erase("wallclock");
  return j;
}

TEST(CliSweepDist, PlanWritesOneSelfContainedJobPerPoint) {
  const fs::path d = temp_dir("plan");
  const std::string scen = sweep_scenario(d, kTwoByTwo);
  const Cmd r = sh("sweep plan " + scen + " --set scenario.apps.0.params.iterations=4 --seed 7 --out " + (d / "p").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("planned 4 points in " + (d / "p").string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep collect " + (d / "p").string()), std::string::npos) << r.out;

  const nlohmann::json plan = read_json(d / "p" / "plan.json");
  EXPECT_EQ(plan["plan"], "smmu-vp sweep plan");
  EXPECT_EQ(plan["scenario"], scen);
  EXPECT_EQ(plan["seed"], 7);
  EXPECT_EQ(plan["sets"], nlohmann::json::array({"scenario.apps.0.params.iterations=4"}));
  ASSERT_EQ(plan["points"].size(), 4u);
  EXPECT_EQ(plan["points"][3]["dir"], "msi__2");
  EXPECT_EQ(plan["points"][3]["labels"]["cores"], "2");

  // A point's job holds its whole configuration: axis values, --set, --seed.
  const nlohmann::json job = read_json(d / "p" / "msi__2" / "scenario.json");
  EXPECT_EQ(job["platform"]["cpu"]["count"], 2);
  EXPECT_EQ(job["scenario"]["apps"][0]["params"]["sync"], 2);
  EXPECT_EQ(job["scenario"]["apps"][0]["params"]["iterations"], 4);
  EXPECT_EQ(job["scenario"]["seed"], 7);

  // One line per point, in point order, naming this smmu-vp and the job by absolute paths.
  const std::vector<std::string> jobs = lines_of(read_text(d / "p" / "jobs.txt"));
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_NE(jobs[3].find("'" + (d / "p" / "msi__2").string() + "'"), std::string::npos) << jobs[3];
  EXPECT_NE(jobs[3].find(fs::canonical(SMMU_VP_CLI).string()), std::string::npos) << jobs[3];
  EXPECT_EQ(plan["points"][3]["job"], jobs[3]);
  EXPECT_FALSE(fs::exists(d / "p" / "sweep.sbatch")) << "only with --slurm";
}

TEST(CliSweepDist, PointsRunFromJobsGiveTheLocalRunnersResults) {
  const fs::path d = temp_dir("plan-same");
  const std::string scen = sweep_scenario(d, kTwoByTwo);
  const Cmd local = sh("sweep " + scen + " --seed 3 --out " + (d / "local").string(), false);
  ASSERT_EQ(local.exit_code, 0) << local.out;
  ASSERT_EQ(sh("sweep plan " + scen + " --seed 3 --out " + (d / "p").string()).exit_code, 0);

  // Before any job ran, every point is missing.
  Cmd c = sh("sweep collect " + (d / "p").string());
  EXPECT_EQ(c.exit_code, 3) << c.out;
  EXPECT_TRUE(has_row(c.out, {"poll", "1", "missing", "missing", "missing"})) << c.out;

  for (int code : run_jobs(d / "p")) EXPECT_EQ(code, 0);
  c = sh("sweep collect " + (d / "p").string(), false);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_EQ(c.out, local.out);  // the same table, character for character
  EXPECT_EQ(read_text(d / "p" / "sweep.csv"), read_text(d / "local" / "sweep.csv"));
  EXPECT_EQ(without_wallclock(read_json(d / "p" / "sweep.json")), without_wallclock(read_json(d / "local" / "sweep.json")));
  // Points are deterministic: run from the job, each gives the same stats.json and config.json.
  for (const char* point : {"poll__1", "poll__2", "msi__1", "msi__2"}) {
    EXPECT_EQ(without_wallclock(read_json(d / "p" / point / "stats.json")),
              without_wallclock(read_json(d / "local" / point / "stats.json"))) << point;
    EXPECT_EQ(read_json(d / "p" / point / "config.json"), read_json(d / "local" / point / "config.json")) << point;
  }
  const Cmd md = sh("sweep collect " + (d / "p").string() + " --format markdown", false);
  EXPECT_EQ(md.out.rfind("| policy | cores | invalidations |", 0), 0u) << md.out;
}

TEST(CliSweepDist, CollectNamesFailedAndMissingPointsAndExitsThree) {
  const fs::path d = temp_dir("plan-fail");
  const std::string scen = sweep_scenario(d, R"({
    "axes": [{"name": "stop", "values": {"long": {}, "short": {"scenario.stop.max_time_us": 0.001}, "later": {}}}],
    "columns": [{"title": "invalidations", "stat": "sw.smmu_stress.invalidations"}]})");
  ASSERT_EQ(sh("sweep plan " + scen + " --out " + (d / "p").string()).exit_code, 0);
  const std::vector<std::string> jobs = lines_of(read_text(d / "p" / "jobs.txt"));
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(shell(jobs[0]).exit_code, 0);
  EXPECT_EQ(shell(jobs[1]).exit_code, 4) << "a job line exits as its run does (the time limit: 4)";
  // jobs[2] is never run.
  const Cmd c = sh("sweep collect " + (d / "p").string());
  EXPECT_EQ(c.exit_code, 3) << c.out;
  EXPECT_TRUE(has_row(c.out, {"long", "5"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"short", "failed"})) << c.out;
  EXPECT_TRUE(has_row(c.out, {"later", "missing"})) << c.out;
  EXPECT_NE(c.out.find("stop=short: failed (exit code 4)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("stop=later: missing (no exit_status: not run, or still running)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("3 points, 2 failed or missing"), std::string::npos) << c.out;
  const nlohmann::json j = read_json(d / "p" / "sweep.json");
  EXPECT_EQ(j["points"][0]["status"], "ok");
  EXPECT_EQ(j["points"][1]["status"], "failed");
  EXPECT_EQ(j["points"][1]["outcome"], "exit code 4");
  EXPECT_EQ(j["points"][2]["status"], "missing");
  EXPECT_TRUE(j["points"][2]["values"]["invalidations"].is_null());
}

TEST(CliSweepDist, SlurmScriptHasAnArrayTaskPerPointAndTheOptions) {
  const fs::path d = temp_dir("plan-slurm");
  const std::string scen = sweep_scenario(d, kTwoByTwo);
  const Cmd r = sh("sweep plan " + scen + " --out " + (d / "p").string() +
                   " --slurm --slurm-concurrency 3 --slurm-time 00:10:00 --slurm-mem 2G --slurm-partition batch"
                   " --slurm-option=--qos=low --exe /opt/smmu-vp/bin/smmu-vp");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sbatch " + (d / "p" / "sweep.sbatch").string()), std::string::npos) << r.out;
  const std::string sbatch = read_text(d / "p" / "sweep.sbatch");
  for (const std::string& l : {std::string("#SBATCH --array=0-3%3"),
                               "#SBATCH --output=" + (d / "p" / "slurm").string() + "/%A_%a.out",
                               std::string("#SBATCH --time=00:10:00"), std::string("#SBATCH --mem=2G"),
                               std::string("#SBATCH --partition=batch"), std::string("#SBATCH --qos=low"),
                               std::string("#SBATCH --cpus-per-task=1")})
    EXPECT_NE(sbatch.find(l + "\n"), std::string::npos) << l << "\n" << sbatch;
  EXPECT_NE(sbatch.find("SLURM_ARRAY_TASK_ID + 1"), std::string::npos) << sbatch;
  EXPECT_TRUE(fs::is_directory(d / "p" / "slurm"));
  // --exe: the smmu-vp the cluster's nodes see.
  EXPECT_NE(read_text(d / "p" / "jobs.txt").find("'/opt/smmu-vp/bin/smmu-vp' run scenario.json"), std::string::npos);
}

TEST(CliSweepDist, RelativeFilePathsInAJobAreMadeAbsolute) {
  // trace_replay.json names its trace relative to platform/scenarios/; the
  // job lives elsewhere and must still find it.
  const fs::path d = temp_dir("plan-paths");
  ASSERT_EQ(sh("sweep plan " + kScenarios + "trace_replay.json --out " + (d / "p").string()).exit_code, 0);
  const nlohmann::json job = read_json(d / "p" / "strict-v5.4__16" / "scenario.json");
  const std::string trace = job["platform"]["devices"]["player0"]["trace"];
  EXPECT_TRUE(fs::path(trace).is_absolute()) << trace;
  EXPECT_TRUE(fs::exists(trace)) << trace;
}

TEST(CliSweepDist, BadPlanInputExitsTwoNamingTheProblem) {
  const fs::path d = temp_dir("plan-bad");
  const std::string scen = sweep_scenario(d, kTwoByTwo);
  // A bad sweep section: nothing is written.
  const std::string bad = write_file(d, "bad.json", R"({"scenario": {"apps": []}, "sweep": {"axes": []}})");
  Cmd r = sh("sweep plan " + bad + " --out " + (d / "b").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("/sweep/axes"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(d / "b"));
  // A plan goes to a new directory.
  ASSERT_EQ(sh("sweep plan " + scen + " --out " + (d / "p").string()).exit_code, 0);
  r = sh("sweep plan " + scen + " --out " + (d / "p").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("is not empty"), std::string::npos) << r.out;
  // The plain sweep's options do not apply to plan; plain sweep needs its file.
  r = sh("sweep --jobs 2 plan " + scen + " --out " + (d / "q").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--jobs before `plan`"), std::string::npos) << r.out;
  r = sh("sweep");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("a scenario file is required"), std::string::npos) << r.out;

  // collect: not a plan directory, a plan.json that is not one, or one whose points do not match its sweep.
  fs::create_directories(d / "empty");
  r = sh("sweep collect " + (d / "empty").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find((d / "empty" / "plan.json").string()), std::string::npos) << r.out;
  // ordered: the axis values' order in plan.json is the points' order.
  auto plan = nlohmann::ordered_json::parse(read_text(d / "p" / "plan.json"));
  plan["points"][1]["dir"] = "elsewhere";
  write_file(d / "p", "plan.json", plan.dump());
  r = sh("sweep collect " + (d / "p").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("plan.json: /points/1/dir: expected \"poll__2\""), std::string::npos) << r.out;
  plan.erase("sweep");
  write_file(d / "p", "plan.json", plan.dump());
  r = sh("sweep collect " + (d / "p").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("plan.json: /sweep"), std::string::npos) << r.out;
  write_file(d / "p", "plan.json", R"({"plan": "something else"})");
  r = sh("sweep collect " + (d / "p").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("plan.json: /plan"), std::string::npos) << r.out;
}

}  // namespace
