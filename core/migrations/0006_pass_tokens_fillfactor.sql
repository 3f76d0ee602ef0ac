-- A pass token is written once and updated once, when it is consumed (pass-token-claims.ts). With pages packed
-- full, that update could not stay on the row's page: a new version elsewhere, and an entry in each of the
-- table's indexes. Pages filled to 60 % leave room for the consumed version beside the first, a heap-only
-- update that touches no index (docs/decisions.md, "The hot path of a validation"). CockroachDB accepts the
-- parameter and ignores it. Rows written before keep their pages; new ones get the room.
ALTER TABLE "pass_tokens" SET (fillfactor = 60);
