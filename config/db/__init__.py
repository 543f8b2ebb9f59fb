"""The database helpers of the write path (PostgreSQL COPY and set-wise upserts, prepared
statements, how a model instance becomes a row)."""
