-- wrk's POST /log for bench/ingest_bench.py --client wrk: the decisions of its decision(), each
-- with a decision_id of its own, the keys taken in turn. Arguments after `--`: the run's tag, then
-- the keys. Prints one JSON line last: requests, seconds, non-2xx answers, socket errors, p50/p99 ms.
local counter, keys, tag = 0, {}, ""
local next_id = 0
local genders, ages = { "f", "m" }, { "18-30", "31-50", "51+" }

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
end

function init(args)
  tag = args[1]
  for i = 2, #args do
    keys[#keys + 1] = args[i]
  end
  math.randomseed(tid)
end

function request()
  counter = counter + 1
  local i = counter
  local ai = math.random() < 0.5 and "approve" or "deny"
  local body = string.format(
    '{"decision_id":"%s-w%d-%d","user_id":"user-%d","model_id":"model-%d","model_version":"1",'
      .. '"ai_recommendation":"%s","ai_confidence":%.3f,"user_decision":"%s","context":"ingest bench",'
      .. '"subgroups":{"gender":"%s","age_group":"%s"}}',
    tag, tid, i, i % 200, i % 5, ai, math.random(), math.random() < 0.75 and ai or "other",
    genders[math.random(2)], ages[math.random(3)]
  )
  return wrk.format("POST", "/v1/log", {
    ["Authorization"] = "Bearer " .. keys[i % #keys + 1],
    ["Content-Type"] = "application/json",
  }, body)
end

function done(summary, latency, requests)
  io.write(string.format(
    '{"requests": %d, "seconds": %.3f, "non_2xx": %d, "socket_errors": %d, "p50": %.2f, "p99": %.2f}\n',
    summary.requests, summary.duration / 1e6, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000
  ))
end
