"""A test-only URLconf that tries to drop the tenant filter through a mixin listed before the
base. Importing it must fail when the class is defined (tests/system/test_tenancy.py)."""

from django.urls import include, path

from audit.models import Decision
from config.api import TenantViewSet


class EveryCustomer:
    def get_queryset(self):
        return Decision.objects.all()


class MixedInDecisions(EveryCustomer, TenantViewSet):
    queryset = Decision.objects.all()


urlpatterns = [
    path("v1/mixed-in-decisions", MixedInDecisions.as_view({"get": "list"})),
    path("", include("config.urls")),
]
