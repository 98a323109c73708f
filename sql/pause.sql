-- anarchon_pause(job [, until]), anarchon_resume(job), anarchon_paused(job),
-- anarchon_pauses(job, from, to): a paused job's claims answer 'paused', and
-- its slots are not missed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS anarchon;
RESET client_min_messages;
TRUNCATE anarchon.runs, anarchon.runs_jobs, anarchon.pauses;
SET anarchon.overlap = 'allow';
\set VERBOSITY default

-- a job nobody paused; pausing it until resumed
SELECT anarchon_paused('pz') IS NULL AS not_paused;
SELECT anarchon_claim('pz', 4102444800000, 'tok-a');
SELECT anarchon_pause('pz');
SELECT anarchon_paused('pz');
SELECT anarchon_claim('pz', 4102444801000, 'tok-b');
SELECT outcome, attempt, lease_until FROM anarchon_claim_info('pz', 4102444801000, 'tok-b');
SELECT count(*) AS runs FROM anarchon.runs WHERE job = 'pz';

-- resume, twice: true, then false
SELECT anarchon_resume('pz');
SELECT anarchon_resume('pz');
SELECT anarchon_claim('pz', 4102444801000, 'tok-b');

-- the pause is kept, with its end (the same millisecond as its start on a fast machine)
SELECT count(*) AS pauses, bool_and(until IS NOT NULL AND until >= since) AS ended FROM anarchon.pauses WHERE job = 'pz';
SELECT count(*) AS listed FROM anarchon_pauses('pz', now() - interval '1 minute', now() + interval '1 minute');

-- a pause with an end: anarchon_paused says when
SELECT anarchon_pause('pz', '2100-01-01 00:00:00+00');
SELECT anarchon_paused('pz') AT TIME ZONE 'UTC' AS until;
SELECT anarchon_pause('pz', '2100-06-01 00:00:00+00');
SELECT anarchon_paused('pz') AT TIME ZONE 'UTC' AS extended;
SELECT anarchon_resume('pz');

-- bad input
\set VERBOSITY sqlstate
SELECT anarchon_pause(NULL);
SELECT anarchon_pause('');
SELECT anarchon_pause('pz', now() - interval '1 second');
SELECT anarchon_pause('pz', 'infinity');
SELECT anarchon_resume('bad job');
\set VERBOSITY terse
SELECT anarchon_pause('pz', now() - interval '1 second');
