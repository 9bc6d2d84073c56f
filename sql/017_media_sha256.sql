-- 017_media_sha256: the SHA-256 a client declares when it registers media,
-- hex. A direct upload to an S3 store is signed for it (the store refuses
-- other bytes) and completing checks the stored object against it. NULL:
-- none declared (uploads through the API, which need none).
ALTER TABLE media ADD COLUMN sha256 text CHECK (sha256 ~ '^[0-9a-f]{64}$');
