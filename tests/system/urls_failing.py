"""A URLconf with views that fail on purpose, to check that a 500 leaks nothing."""

from django.db import OperationalError
from django.urls import include, path
from rest_framework.views import APIView


class Boom(APIView):
    def get(self, request):
        raise RuntimeError("secret internals: /etc/passwd")


class Locked(APIView):
    def get(self, request):
        raise OperationalError("database is locked")


def plain_boom(request):
    raise RuntimeError("secret internals in a plain view")


urlpatterns = [
    path("v1/boom", Boom.as_view()),
    path("v1/plain-boom", plain_boom),
    path("v1/locked", Locked.as_view()),
    path("", include("config.urls")),
]
