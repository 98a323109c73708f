-- setup.sql — what the documentation's PostgreSQL examples take as given:
-- the application's role and database (app), and the role that owns a
-- pg_cron job (job_owner).  Run once on the suite's server.
CREATE ROLE app LOGIN;
CREATE ROLE job_owner LOGIN;
CREATE DATABASE app;
