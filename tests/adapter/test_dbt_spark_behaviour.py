"""dbt's own adapter test suite (dbt-tests-adapter): the plugin keeps everything dbt-spark does.

Tables, views, ephemeral models, incremental models, seeds, snapshots, singular and generic
tests, unit tests (through the adapter's own unit materialization), and adapter methods, through
the spark_streaming adapter on a Delta-enabled session.
"""

import pytest

from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes

pytestmark = pytest.mark.adapter_suite
DELTA_EVERYWHERE = {
    "models": {"+file_format": "delta"},
    "seeds": {"+file_format": "delta"},
    "snapshots": {"+file_format": "delta"},
}


class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


class TestSingularTests(BaseSingularTests):
    pass


class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


class TestEmpty(BaseEmpty):
    pass


class TestEphemeral(BaseEphemeral):
    pass


class TestIncremental(BaseIncremental):
    pass


class TestGenericTests(BaseGenericTests):
    pass


class TestAdapterMethod(BaseAdapterMethod):
    pass


class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return DELTA_EVERYWHERE


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return DELTA_EVERYWHERE


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self):
        # Spark's literals and their YAML for a given/expected row: sql_value, yaml_value
        return [
            ["1", "1"],
            ["2.5", "2.5"],
            ["'12345'", "12345"],
            ["'string'", "string"],
            ["true", "true"],
            ["date '2011-11-11'", "2011-11-11"],
            ["timestamp '2013-11-03 00:00:00'", "2013-11-03 00:00:00"],
            ["array(1, 2, 3)", "'array(1, 2, 3)'"],
            ["named_struct('a', 1, 'b', 2)", "'named_struct(\"a\", 1, \"b\", 2)'"],
        ]


class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass
