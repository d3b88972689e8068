-- mapcommons_text catches the error of bytes that are not UTF-8 in an
-- exception block, a subtransaction, which PostgreSQL refuses during a
-- parallel operation: declared parallel safe, it made every parallel
-- read of a dataset's view fail ("cannot start subtransactions during a
-- parallel operation"). Unsafe, such reads are planned without workers.
ALTER FUNCTION mapcommons_text(bytea) PARALLEL UNSAFE;
