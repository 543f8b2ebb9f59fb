"""Pagination (docs/reference/conventions.md, Lists and paging): `page` (>= 1) and `limit` (1..100) with no
silent clamping, read by config.inputs.positive_int."""

import math

from django.db.models import QuerySet
from rest_framework.pagination import BasePagination
from rest_framework.request import Request
from rest_framework.response import Response

from config.inputs import positive_int
from config.jsondoc import JSONObject


class PagePagination(BasePagination):
    """`page` (>= 1) and `limit` (1..100), no silent clamping; the list envelope."""

    camel_case = False
    max_limit = 100
    default_limit = 50

    def paginate_queryset(self, queryset, request: Request, view=None):
        self.page = positive_int(
            request.query_params.get("page"), name="page", default=1, minimum=1, maximum=None
        )
        self.limit = positive_int(
            request.query_params.get("limit"),
            name="limit",
            default=self.default_limit,
            minimum=1,
            maximum=self.max_limit,
        )
        known_total = getattr(view, "pagination_total", None)
        if known_total is not None:
            self.total = known_total  # the view knows the size without a COUNT(*)
        else:
            self.total = queryset.count() if isinstance(queryset, QuerySet) else len(queryset)
        start = (self.page - 1) * self.limit
        if start >= self.total:
            return []  # past the last page: no query with an absurd offset
        return list(queryset[start : start + self.limit])

    def envelope(self) -> JSONObject:
        total_pages = math.ceil(self.total / self.limit) if self.total else 0
        has_more = self.page < total_pages
        if self.camel_case:
            return {
                "page": self.page,
                "limit": self.limit,
                "total": self.total,
                "totalPages": total_pages,
                "hasMore": has_more,
            }
        return {
            "page": self.page,
            "limit": self.limit,
            "total": self.total,
            "total_pages": total_pages,
            "has_more": has_more,
        }

    def get_paginated_response(self, data: object) -> Response:
        return Response({"data": data, "pagination": self.envelope()})

    def get_paginated_response_schema(self, schema):
        page_props = {
            "page": {"type": "integer"},
            "limit": {"type": "integer"},
            "total": {"type": "integer"},
            ("totalPages" if self.camel_case else "total_pages"): {"type": "integer"},
            ("hasMore" if self.camel_case else "has_more"): {"type": "boolean"},
        }
        return {
            "type": "object",
            "required": ["data", "pagination"],
            "properties": {"data": schema, "pagination": {"type": "object", "properties": page_props}},
        }

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": "page",
                "in": "query",
                "required": False,
                "schema": {"type": "integer", "minimum": 1, "default": 1},
            },
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_limit,
                    "default": self.default_limit,
                },
            },
        ]


class CamelPagePagination(PagePagination):
    camel_case = True
