-- Named queries of the executor requests' replay protection (admin/store/nonces.go).
-- Same macros as queries.sql.

-- name: NonceClaim :exec
-- in: nonce string, expires_at int64
-- The nonce of a signed executor request an admin replica accepts. 0 rows
-- affected: some replica accepted it already (a replay).
{{insert_ignore}} INTO executor_nonce (nonce, expires_at) VALUES (?, ?);

-- name: NoncePurge :exec
-- in: expires_at int64, limit int
-- Nonces expired before ? (Unix ms), at most ? of them, oldest first. The
-- derived table lets MySQL limit a subquery of the table it deletes from.
DELETE FROM executor_nonce WHERE nonce IN (
  SELECT nonce FROM (SELECT nonce FROM executor_nonce WHERE expires_at < ? ORDER BY expires_at LIMIT ?) x
);
