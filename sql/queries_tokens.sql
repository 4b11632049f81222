-- Named queries of personal API keys (table api_token, migration 0002).
-- Same conventions as queries.sql.

-- name: APIKeyInsert :lastid
-- in: user_id int64, name string, prefix string, hash string, role_cap string, expires_at sql.NullInt64, parent_id sql.NullInt64
INSERT INTO api_token (user_id, name, prefix, hash, role_cap, created_at, expires_at, parent_id)
VALUES (?, ?, ?, ?, ?, {{now_ms}}, ?, ?) {{returning_id}};

-- The token that creates another, locked until the new one is stored: a
-- revocation of it (APIKeyChildren) waits, or it is seen revoked here.
-- name: APIKeyLockParent :one
-- in: id int64
-- out: revoked_at sql.NullInt64
SELECT revoked_at FROM api_token WHERE id = ? {{for_update}};

-- name: APIKeyByID :one
-- in: id int64
-- out: APIKey
SELECT t.id, t.user_id, u.username, t.name, t.prefix, t.role_cap, t.created_at, t.last_used_at,
       t.expires_at, t.revoked_at, t.parent_id
FROM api_token t JOIN app_user u ON u.id = t.user_id
WHERE t.id = ?;

-- Tokens of one user (user_id = ?) or of everyone (? = 0), newest first.
-- name: APIKeyList :many
-- in: user_id int64, user_id int64, limit int
-- out: APIKey
SELECT t.id, t.user_id, u.username, t.name, t.prefix, t.role_cap, t.created_at, t.last_used_at,
       t.expires_at, t.revoked_at, t.parent_id
FROM api_token t JOIN app_user u ON u.id = t.user_id
WHERE (? = 0 OR t.user_id = ?)
ORDER BY t.id DESC
LIMIT ?;

-- name: APIKeyCountActive :one
-- in: user_id int64
-- out: n int
SELECT COUNT(*) FROM api_token
WHERE user_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > {{now_ms}});

-- The token of a hash with its user, and the database clock that decides
-- whether it has expired. A token is never older than its user: the join
-- condition on created_at keeps a token from passing to a later user that
-- happened to get the id of a deleted one.
-- name: APIKeyAuth :one
-- in: hash string
-- out: apiKeyAuthRow
SELECT t.id, t.user_id, u.username, t.name, t.prefix, t.role_cap, t.created_at, t.last_used_at,
       t.expires_at, t.revoked_at, t.parent_id, {{now_ms}} AS db_now
FROM api_token t JOIN app_user u ON u.id = t.user_id AND u.created_at <= t.created_at
WHERE t.hash = ?;

-- Written at most once a minute per token, so that a busy script does not
-- turn every request into a write.
-- name: APIKeyTouch :exec
-- in: id int64
UPDATE api_token SET last_used_at = {{now_ms}}
WHERE id = ? AND (last_used_at IS NULL OR last_used_at < {{now_ms}} - 60000);

-- name: APIKeyRevoke :exec
-- in: id int64
UPDATE api_token SET revoked_at = {{now_ms}} WHERE id = ? AND revoked_at IS NULL;

-- The tokens created by the tokens of an IN list, locked, with whether
-- they are revoked: a revocation walks the tree one level at a time. The
-- lock of each row before its children are read pairs with
-- APIKeyLockParent: a child created meanwhile is either seen here or
-- refused there.
-- name: APIKeyChildren :many
-- in: ids []int64
-- out: id int64, revoked bool
SELECT id, revoked_at IS NOT NULL AS revoked FROM api_token WHERE parent_id IN (?) ORDER BY id {{for_update}};

-- name: APIKeysRevoke :exec
-- in: ids []int64
UPDATE api_token SET revoked_at = {{now_ms}} WHERE id IN (?) AND revoked_at IS NULL;
