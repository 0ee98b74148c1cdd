"""The benchmark's own PostgreSQL database, beside DATABASE_URL's on the same server."""

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import environ
import psycopg
from psycopg import sql

# Two checkouts benchmarking on one server each name their own (BENCH_DATABASE).
BENCH_DATABASE = os.environ.get("BENCH_DATABASE", "papershelf_scale")
PROJECT = Path(__file__).resolve().parent.parent


def server_conninfo(dbname: str) -> str:
    base = environ.Env.db_url_config(
        os.environ.get("DATABASE_URL", "postgres://root@127.0.0.1:5432/papershelf")
    )
    return psycopg.conninfo.make_conninfo(
        dbname=dbname,
        host=base.get("HOST") or None,
        port=base.get("PORT") or None,
        user=base.get("USER") or None,
        password=base.get("PASSWORD") or None,
    )


def bench_url() -> str:
    """DATABASE_URL for Django processes that work on the benchmark database."""
    info = psycopg.conninfo.conninfo_to_dict(server_conninfo(BENCH_DATABASE))
    credentials = info.get("user", "")
    if info.get("password"):
        credentials += f":{info['password']}"
    host = f"{info.get('host', '127.0.0.1')}:{info.get('port', 5432)}"
    return f"postgres://{credentials}{'@' if credentials else ''}{host}/{BENCH_DATABASE}"


def create() -> str:
    """Drop and recreate the benchmark database; returns its conninfo."""
    with psycopg.connect(server_conninfo("postgres"), autocommit=True) as admin:
        name = sql.Identifier(BENCH_DATABASE)
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(name))
    return server_conninfo(BENCH_DATABASE)


def django_env(**extra: str) -> dict[str, str]:
    """The environment of a production-like Django process on the benchmark database."""
    return {
        **os.environ,
        "DATABASE_URL": bench_url(),
        "DEBUG": "0",
        "SECRET_KEY": "benchmark-only-secret-key",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "LOG_LEVEL": "WARNING",
        # One client asks for thousands of pages: it measures the server, not the limits.
        "RATELIMIT_ENABLE": "0",
        **extra,
    }


def manage(*args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=PROJECT, env=django_env(), check=True)


def add_readers() -> dict[str, int]:
    """Readers and their subscriptions, made by bench.readers through the models."""
    result = subprocess.run(
        [sys.executable, "-m", "bench.readers"],
        cwd=PROJECT,
        env=django_env(),
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout)


def migrate() -> None:
    manage("migrate", "--noinput", "--verbosity", "0")


def drop_secondary_indexes(cursor: psycopg.Cursor, table_pattern: str) -> list[str]:
    """Drop the indexes no constraint owns on matching tables; returns their definitions."""
    cursor.execute(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)"
        " FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid"
        " WHERE t.relname LIKE %s AND t.relnamespace = 'public'::regnamespace"
        " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)",
        [table_pattern],
    )
    indexes = cursor.fetchall()
    for name, _ in indexes:
        cursor.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    return [definition for _, definition in indexes]


def restore_indexes(cursor: psycopg.Cursor, definitions: list[str], *, log=print) -> None:
    cursor.execute("SET maintenance_work_mem = '1GB'")
    for definition in definitions:
        started = time.perf_counter()
        cursor.execute(definition)
        log(f"  {time.perf_counter() - started:6.1f} s  {definition}")


def reset_sequences(cursor: psycopg.Cursor) -> None:
    """Identity columns continue after the ids COPY wrote."""
    cursor.execute(
        "SELECT table_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND column_name = 'id' AND is_identity = 'YES'"
    )
    for (table,) in cursor.fetchall():
        cursor.execute(
            sql.SQL(
                "SELECT setval(pg_get_serial_sequence({table_literal}, 'id'),"
                " coalesce((SELECT max(id) FROM {table}), 0) + 1, false)"
            ).format(table_literal=sql.Literal(table), table=sql.Identifier(table))
        )


def row_counts() -> dict[str, int]:
    tables = [
        "catalog_category",
        "catalog_author",
        "catalog_tag",
        "catalog_paper",
        "catalog_paperauthor",
        "catalog_paper_categories",
        "catalog_papertag",
        "catalog_codelink",
        "catalog_summary",
        "auth_user",
        "accounts_profile",
        "accounts_subscription",
        "catalog_readersignal",
    ]
    with psycopg.connect(server_conninfo(BENCH_DATABASE)) as conn:
        return {
            table: conn.execute(
                sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
            ).fetchone()[0]
            for table in tables
        }


def record_build(*, papers: int, seconds: float) -> dict:
    """Keep the build's figures with the database (its comment), for runs that
    measure it later (bench.run --reuse-corpus); returns them."""
    with psycopg.connect(server_conninfo(BENCH_DATABASE), autocommit=True) as conn:
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        facts = {
            "papers": papers,
            "build_seconds": round(seconds),
            "database_bytes": size,
            # ru_maxrss is in kB on Linux; children: the largest of the COPY
            # workers and the Django commands.
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
            "child_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,
        }
        conn.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(BENCH_DATABASE), sql.Literal(json.dumps(facts))
            )
        )
    return facts


def build_facts() -> dict:
    """What record_build kept, with the database's size now; empty if it was never recorded."""
    with psycopg.connect(server_conninfo(BENCH_DATABASE)) as conn:
        comment, size = conn.execute(
            "SELECT shobj_description(oid, 'pg_database'), pg_database_size(oid)"
            " FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    return {**json.loads(comment), "database_bytes": size} if comment else {}
