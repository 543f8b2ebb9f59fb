"""The staff console: the Django admin as the default site, its index grouped by task rather than by
app, and an overview page as its home.

`config` imports no app, so both the grouping and the overview are data: the groups name models by
"app_label.model_name" strings (a "app_label.*" entry takes every model an app registers, so an app
that registers models later appears without a change here), and the apps contribute overview panels
and extra pages through `console_panel` / `console_page`, called from their own admin modules.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, URLResolver, path, reverse

from config.admin_scope import organisation_scoped
from config.clientaddr import client_address
from config.failures import FailureWindow


@dataclass(frozen=True)
class TaskGroup:
    slug: str
    name: str
    members: tuple[str, ...]  # "app_label.model_name", "app_label.*" or "page:<page name>"
    description: str = ""


# The index, in the order a compliance officer works. A model that no group names lands in "Other".
TASK_GROUPS: tuple[TaskGroup, ...] = (
    TaskGroup(
        "alerts",
        "Alerts",
        ("fairness.amplificationalert", "bias.biasalert", "fairness.fairnesssignal"),
        "Amplification alerts to triage, bias detection findings and the fairness signals behind them.",
    ),
    TaskGroup(
        "decisions",
        "Decisions and calibration",
        (
            "page:user-calibration",
            "page:reviewer",
            "audit.decision",
            "audit.auditentry",
            "audit.chainhead",
            "audit.signedcheckpoint",
            "calibration.riskuserstate",
            "calibration.userdailyaggregate",
            "calibration.threshold",
            "bias.modelfavorablevalues",
        ),
        "The decision log and its tamper-evident audit trail; who over- or under-trusts the AI.",
    ),
    TaskGroup(
        "oversight",
        "Oversight",
        ("page:review-effort", "page:vigilance", "drift.driftalarm", "drift.driftmonitor"),
        "Is human oversight meaningful: do reviewers look before agreeing with the AI, do they catch "
        "known wrong answers, and has anyone's reliance on the AI drifted from their baseline?",
    ),
    TaskGroup("reports", "Reports", ("compliance.*",), "Regulatory reports and their exports."),
    TaskGroup(
        "integrations",
        "Integrations",
        ("webhooks.webhook", "webhooks.delivery"),
        "Webhook subscriptions and their deliveries.",
    ),
    TaskGroup(
        "access",
        "Access",
        (
            "keys.apikey",
            "audit.erasure",
            "audit.retentionpolicy",
            "keys.adminauditlog",
            "keys.customer",
            "auth.user",
            "auth.group",
            "admin.logentry",
            "core.workerheartbeat",
        ),
        "API keys, erasures of personal data, staff accounts and what every staff user did in this console.",
    ),
)
OTHER = TaskGroup("other", "Other", (), "")

PanelFn = Callable[[HttpRequest], dict[str, object] | None]
ViewFn = Callable[[HttpRequest], HttpResponse]


@dataclass(frozen=True)
class Panel:
    order: int
    template: str
    build: PanelFn
    permission: str | None  # "app_label.codename"; None: every staff user


@dataclass(frozen=True)
class Page:
    name: str  # URL name (admin:console-<name>) and the key TASK_GROUPS uses ("page:<name>")
    title: str
    view: ViewFn
    permission: str | None


@dataclass
class _Registry:
    panels: list[Panel] = field(default_factory=list)
    pages: dict[str, Page] = field(default_factory=dict)


_registry = _Registry()


def console_panel(
    *, order: int, template: str, permission: str | None = None
) -> Callable[[PanelFn], PanelFn]:
    """Register an overview panel: a function of the request returning its template context (or
    None to leave the panel out). Panels are shown in `order`, to users holding `permission`."""

    def register(build: PanelFn) -> PanelFn:
        if not any(p.build is build for p in _registry.panels):
            _registry.panels.append(Panel(order, template, build, permission))
            _registry.panels.sort(key=lambda p: p.order)
        return build

    return register


def console_page(*, name: str, title: str, permission: str | None = None) -> Callable[[ViewFn], ViewFn]:
    """Register an extra admin page at /admin/console/<name>, listed in the group that names it."""

    def register(view: ViewFn) -> ViewFn:
        _registry.pages[name] = Page(name, title, view, permission)
        return view

    return register


def _allowed(request: HttpRequest, permission: str | None) -> bool:
    return permission is None or request.user.has_perm(permission)


# Failed console sign-ins, counted per client address and per user name (docs/reference/
# limits.md, "Console sign-in"): past the limit in one window, the sign-in form answers 429
# without checking the password, so a password cannot be guessed even when it is right.
login_failures = FailureWindow(
    "adminlogin",
    limit=lambda: settings.ADMIN_LOGIN_FAILURES,
    window_seconds=lambda: settings.ADMIN_LOGIN_WINDOW_SECONDS,
)


def _login_subjects(request: HttpRequest) -> list[str]:
    username = str(request.POST.get("username", ""))[:150].strip().casefold()
    return [f"addr:{client_address(request.META)}", f"user:{username}"]


class TrustcalAdminSite(admin.AdminSite):
    site_header = "Trustcal staff console"
    site_title = "Trustcal console"
    index_title = "Overview"
    site_url = None  # no public site to "view": the service is an API (/v1/docs)
    index_template = "admin/console/overview.html"
    enable_nav_sidebar = True

    def register[M: Model](
        self,
        model_or_iterable: type[M] | Iterable[type[M]],
        admin_class: "type[admin.ModelAdmin[M]] | None" = None,
        **options: object,
    ) -> None:
        """Every model page is scoped to the staff user's organisations (config/admin_scope.py)."""
        models = [model_or_iterable] if isinstance(model_or_iterable, type) else list(model_or_iterable)
        for model in models:
            super().register(model, organisation_scoped(model, admin_class or admin.ModelAdmin), **options)

    def login(self, request: HttpRequest, extra_context: dict[str, object] | None = None) -> HttpResponse:
        if request.method != "POST":
            return super().login(request, extra_context)
        subjects = _login_subjects(request)
        wait = max(login_failures.blocked_for(subject) for subject in subjects)
        if wait:
            return HttpResponse(
                f"Too many failed sign-ins from this address or for this user; try again in {wait} s.",
                status=429,
                content_type="text/plain; charset=utf-8",
                headers={"Retry-After": str(wait)},
            )
        response = super().login(request, extra_context)
        if not (300 <= response.status_code < 400):  # a redirect is a successful sign-in
            for subject in subjects:
                login_failures.fail(subject)
        return response

    def get_urls(self) -> list[URLPattern | URLResolver]:
        extra: list[URLPattern] = [
            path("group/<slug:slug>/", self.admin_view(self.group_index), name="console-group"),
            path("console/<slug:name>/", self.admin_view(self.page_view), name="console-page"),
        ]
        return extra + super().get_urls()

    # --- the grouped index ------------------------------------------------------------------

    def _page_entries(self, request: HttpRequest) -> dict[str, dict[str, object]]:
        entries: dict[str, dict[str, object]] = {}
        for page in _registry.pages.values():
            if _allowed(request, page.permission):
                url = reverse("admin:console-page", kwargs={"name": page.name}, current_app=self.name)
                entries[f"page:{page.name}"] = {
                    "name": page.title,
                    "object_name": page.name.replace("-", ""),
                    "perms": {"view": True},
                    "admin_url": url,
                    "add_url": None,
                    "view_only": True,
                }
        return entries

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, object]]:
        if app_label is not None:
            return super().get_app_list(request, app_label)
        models: dict[str, dict[str, object]] = {}
        for app in self._build_app_dict(request).values():
            for entry in app["models"]:
                models[f"{app['app_label']}.{entry['object_name'].lower()}"] = entry
        models.update(self._page_entries(request))
        groups = []
        for group in (*TASK_GROUPS, OTHER):
            members = []
            for member in group.members:
                if member.endswith(".*"):
                    prefix = member[:-1]
                    members += [models.pop(k) for k in sorted(models) if k.startswith(prefix)]
                elif member in models:
                    members.append(models.pop(member))
            if group is OTHER:
                members = [models.pop(k) for k in sorted(models)]
            if members:
                groups.append(
                    {
                        "name": group.name,
                        "app_label": group.slug,
                        "description": group.description,
                        "app_url": reverse(
                            "admin:console-group", kwargs={"slug": group.slug}, current_app=self.name
                        ),
                        "has_module_perms": True,
                        "models": members,
                    }
                )
        return groups

    def group_index(self, request: HttpRequest, slug: str) -> HttpResponse:
        groups = [g for g in self.get_app_list(request) if g["app_label"] == slug]
        if not groups:
            raise Http404("No such group, or nothing in it you may see.")
        context = {
            **self.each_context(request),
            "title": groups[0]["name"],
            "subtitle": None,
            "app_list": groups,
            "app_label": slug,
        }
        request.current_app = self.name
        return TemplateResponse(request, "admin/app_index.html", context)

    # --- the overview and extra pages ----------------------------------------------------

    def index(self, request: HttpRequest, extra_context: dict[str, object] | None = None) -> TemplateResponse:
        panels = []
        for panel in _registry.panels:
            if not _allowed(request, panel.permission):
                continue
            context = panel.build(request)
            if context is not None:
                panels.append({"template": panel.template, **context})
        return super().index(request, {"panels": panels, **(extra_context or {})})

    def page_view(self, request: HttpRequest, name: str) -> HttpResponse:
        page = _registry.pages.get(name)
        if page is None:
            raise Http404("No such page.")
        if not _allowed(request, page.permission):
            raise PermissionDenied
        return page.view(request)

    def page_context(self, request: HttpRequest, title: str) -> dict[str, object]:
        """The context every console page extends (sidebar, header, title)."""
        return {**self.each_context(request), "title": title, "subtitle": None}


def changelist_url(model_label: str, **query: str) -> str | None:
    """The admin list of "app_label.model_name" with a query string, or None when not registered."""
    app_label, model_name = model_label.split(".")
    try:
        url = reverse(f"admin:{app_label}_{model_name}_changelist")
    except NoReverseMatch:
        return None
    if query:
        from urllib.parse import urlencode

        url += "?" + urlencode(query)
    return url


def permission_denied_page(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """A 403 inside the console keeps the console around it (header, user links, the way home);
    elsewhere Django's plain page."""
    from django.views.defaults import permission_denied

    if not request.path.startswith(reverse("admin:index")):
        return permission_denied(request, exception or PermissionDenied())
    context = {**admin.site.each_context(request), "title": "You cannot open this page"}
    return TemplateResponse(request, "admin/403.html", context, status=403).render()


# The console's icon, served at /favicon.ico (browsers ask for it on every page).
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" '
    'fill="#417690"/><path d="M8 10h16M16 10v14" stroke="#fff" stroke-width="4" stroke-linecap="round"/></svg>'
)


def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(FAVICON_SVG, content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
