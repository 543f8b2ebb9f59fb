"""Every page of the staff console a superuser can open: the overview, the task groups, the extra
pages, every model's list and the pages of its first rows (for tests that look for what no page
may show)."""

from collections.abc import Iterator

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import reverse

from config.admin_site import TASK_GROUPS, _registry

ROWS_PER_MODEL = 20


def console_pages(client: Client) -> Iterator[tuple[str, str]]:
    """(url, html) of every page; each must answer 200."""
    urls = [reverse("admin:index")]
    urls += [reverse("admin:console-group", kwargs={"slug": group.slug}) for group in TASK_GROUPS]
    urls += [reverse("admin:console-page", kwargs={"name": name}) for name in _registry.pages]
    for model in admin.site._registry:
        opts = model._meta
        urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        for pk in model._default_manager.values_list("pk", flat=True)[:ROWS_PER_MODEL]:
            urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[quote(pk)]))
    for url in urls:
        page = client.get(url)
        assert page.status_code == 200, (url, page.status_code)
        yield url, page.content.decode()
