#!/usr/bin/env node
// Throughput benchmark of the @mastra/evals code scorers (the reference implementation that
// assay's Python scorers port). It exists so the Python side can be compared against the
// reference on the same data, one item at a time, with the same run shape the reference
// tests use.
//
// Usage: node bench.mjs --pairs N --data <jsonl path> [--scorers a,b,...] [--warmup 50]
//
// Prints ONE JSON object to stdout; progress and warnings go to stderr.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import process from 'node:process';

import {
  createCompletenessScorer,
  createContentSimilarityScorer,
  createKeywordCoverageScorer,
  createTextualDifferenceScorer,
  createToneScorer,
  createToolCallAccuracyScorerCode,
} from '@mastra/evals/scorers/prebuilt';
import { createAgentTestRun, createTestMessage } from '@mastra/evals/scorers/utils';

const require = createRequire(import.meta.url);
// Report the versions actually installed, not the ones we hope are installed.
const EVALS_VERSION = require('@mastra/evals/package.json').version;

// Benchmark name -> factory. `tools` says the run's output must carry a tool invocation.
const SCORERS = {
  completeness: { make: () => createCompletenessScorer(), tools: false },
  'content-similarity': { make: () => createContentSimilarityScorer(), tools: false },
  'keyword-coverage': { make: () => createKeywordCoverageScorer(), tools: false },
  'textual-difference': { make: () => createTextualDifferenceScorer(), tools: false },
  tone: { make: () => createToneScorer(), tools: false },
  'tool-call-accuracy-code': {
    make: () => createToolCallAccuracyScorerCode({ expectedTool: 'search' }),
    tools: true,
  },
};

function usage(msg) {
  if (msg) process.stderr.write(`error: ${msg}\n`);
  process.stderr.write(
    'usage: node bench.mjs --pairs N --data <jsonl path> [--scorers a,b,...] [--warmup 50]\n' +
      `scorers: ${Object.keys(SCORERS).join(',')}\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { pairs: undefined, data: undefined, scorers: Object.keys(SCORERS), warmup: 50 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '--pairs':
        opts.pairs = Number.parseInt(next(), 10);
        break;
      case '--data':
        opts.data = next();
        break;
      case '--scorers':
        opts.scorers = next()
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case '--warmup':
        opts.warmup = Number.parseInt(next(), 10);
        break;
      case '-h':
      case '--help':
        usage();
        break;
      default:
        usage(`unknown argument ${arg}`);
    }
  }
  if (!Number.isInteger(opts.pairs) || opts.pairs <= 0) usage('--pairs must be a positive integer');
  if (!opts.data) usage('--data is required');
  if (!Number.isInteger(opts.warmup) || opts.warmup < 0) usage('--warmup must be >= 0');
  const unknown = opts.scorers.filter((s) => !(s in SCORERS));
  if (unknown.length || opts.scorers.length === 0) usage(`unknown scorer(s): ${unknown.join(',')}`);
  return opts;
}

/** First n STS-B pairs from a JSONL file, cycling when the file has fewer than n. */
function loadPairs(path, n) {
  const rows = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (rows.length >= n) break;
    if (!line.trim()) continue;
    const obj = JSON.parse(line);
    if (typeof obj.sentence1 !== 'string' || typeof obj.sentence2 !== 'string') {
      throw new Error(`${path}: line without string sentence1/sentence2: ${line.slice(0, 120)}`);
    }
    rows.push({ sentence1: obj.sentence1, sentence2: obj.sentence2 });
  }
  if (rows.length === 0) throw new Error(`${path}: no pairs`);
  const out = [];
  for (let i = 0; i < n; i++) out.push(rows[i % rows.length]);
  return { pairs: out, distinct: rows.length };
}

/**
 * Agent-shaped run as in the reference tests: one user message (sentence1) in, one
 * assistant message (sentence2) out. For the tool-call scorer the assistant message also
 * carries one legacy `content.toolInvocations` entry named 'search' in state 'result'.
 */
function buildRun(pair, index, withTool) {
  const toolInvocations = withTool
    ? [
        {
          toolCallId: `call-${index}`,
          toolName: 'search',
          args: { query: pair.sentence1 },
          result: { text: pair.sentence2 },
          state: 'result',
        },
      ]
    : [];
  return createAgentTestRun({
    inputMessages: [createTestMessage({ content: pair.sentence1, role: 'user', id: `u-${index}` })],
    output: [
      createTestMessage({
        content: pair.sentence2,
        role: 'assistant',
        id: `a-${index}`,
        toolInvocations,
      }),
    ],
  });
}

const MB = 1024 * 1024;

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const { pairs, distinct } = loadPairs(opts.data, opts.pairs);
  if (distinct < opts.pairs) {
    process.stderr.write(`note: ${distinct} distinct pairs in ${opts.data}; cycling to ${opts.pairs}\n`);
  }

  // Runs are built once, before any timing, so the timed loop measures scoring only.
  const plainRuns = pairs.map((p, i) => buildRun(p, i, false));
  const toolRuns = pairs.map((p, i) => buildRun(p, i, true));

  // RSS of the whole node process (V8 heap + native + loaded modules), sampled after each
  // scorer's warm-up and timed loop; peak_rss_mb is the running maximum of those samples,
  // so it is cumulative over the scorers run so far in this process.
  let peakRss = process.memoryUsage().rss;
  const sampleRss = () => {
    const rss = process.memoryUsage().rss;
    if (rss > peakRss) peakRss = rss;
    return rss;
  };

  const results = {};
  for (const name of opts.scorers) {
    const spec = SCORERS[name];
    const scorer = spec.make();
    const runs = spec.tools ? toolRuns : plainRuns;

    for (let i = 0; i < opts.warmup; i++) {
      await scorer.run(runs[i % runs.length]);
    }
    sampleRss();

    let sum = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < runs.length; i++) {
      const res = await scorer.run(runs[i]);
      sum += res.score;
    }
    const t1 = process.hrtime.bigint();
    const rssAfter = sampleRss();

    const seconds = Number(t1 - t0) / 1e9;
    const mean = sum / runs.length;
    if (!Number.isFinite(mean)) throw new Error(`${name}: non-finite mean score ${mean}`);
    results[name] = {
      mastra_id: scorer.id,
      items: runs.length,
      seconds,
      items_per_second: runs.length / seconds,
      mean_score: mean,
      rss_after_mb: rssAfter / MB,
      peak_rss_mb: peakRss / MB,
    };
    process.stderr.write(
      `${name}: ${runs.length} items in ${seconds.toFixed(3)} s ` +
        `(${(runs.length / seconds).toFixed(1)}/s), mean ${mean.toFixed(4)}\n`,
    );
  }

  const out = {
    node: process.version,
    mastra_evals: EVALS_VERSION,
    pairs: opts.pairs,
    distinct_pairs: distinct,
    warmup: opts.warmup,
    data: opts.data,
    memory_note:
      'rss_after_mb / peak_rss_mb are process.memoryUsage().rss of the whole node process, ' +
      'sampled after each warm-up and timed loop; peak_rss_mb is the running max so far. ' +
      'process_max_rss_mb is the kernel high-water mark (process.resourceUsage().maxRSS).',
    process_max_rss_mb: (process.resourceUsage().maxRSS * 1024) / MB,
    results,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
