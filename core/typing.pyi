"""Names for the type checker alone: no module stands behind this stub, so only
`if TYPE_CHECKING:` blocks import from it. django-stubs-ext comes with
django-stubs, which nothing but the checker needs."""

from django_stubs_ext import FieldsetSpec as FieldsetSpec
from django_stubs_ext import StrOrPromise as StrOrPromise
from django_stubs_ext import WithAnnotations as WithAnnotations
