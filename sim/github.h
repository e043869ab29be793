/*
 * github.h: the GitHub REST calls of the node-runner flow (scripts/node-runner.sh, docs/ci.md
 * "The node as a runner"), on the control server, as GitHub documents them
 * (docs/internals/ci.md cites the pages):
 *
 *   POST   /repos/O/R/actions/runners/registration-token  201 {token, expires_at}
 *   GET    /repos/O/R/actions/runners                     200 {total_count, runners}
 *   DELETE /repos/O/R/actions/runners/ID                  204
 *
 * with "Authorization: Bearer|token T": no header is 401 "Requires authentication", a T
 * that is no GitHub token (ghp_, github_pat_, ghs_, gho_, ghu_) is 401 "Bad credentials",
 * a T holding "readonly" is 403 (no Administration write permission), an unknown runner
 * is 404. The runner's own side, what config.sh and run.sh of the emulator's nodes send
 * (over /run/gpucluster-sim/github.sock, with lib/actions-runner/github-http):
 *
 *   POST /actions/runner-registration  "Authorization: RemoteAuth T", {url, runner_event,
 *        name, labels, ephemeral}: 404 when T is no live registration token of the
 *        repository of url (GitHub's answer to config.sh with a bad token), else 200 {id}
 *   POST /actions/runners/ID/online     run.sh started: the runner is "online"
 *   POST /actions/runners/ID/job        a job ran on it: an ephemeral runner is removed
 *
 * One store per process behind its own mutex; a registration token is good for one hour
 * and any number of runners, as GitHub's is.
 */
#ifndef GC_SIM_GITHUB_H
#define GC_SIM_GITHUB_H

#include <stdbool.h>

#include "sim/sim.h"

/* Answers req when it is one of the paths above; false otherwise (resp untouched). */
bool sim_github_handle(const struct sim_req *req, struct sim_resp *resp);

#endif
