"""PostgreSQL backend that runs the application as a non-owner role.

``ENGINE = "accounts.db"`` with ``OPTIONS["assume_role"]`` (``DATABASE_APP_ROLE``): every
connection ``SET ROLE``s to that role, which owns no table, so row-level security binds
it. Schema changes run as the login (owner) role inside ``owner_mode()`` — ``migrate``,
``flush`` and the test database's creation do this themselves.
"""

from accounts.db.base import application_role, grant_application_role, owner_mode

__all__ = ["application_role", "grant_application_role", "owner_mode"]
