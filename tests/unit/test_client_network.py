"""Who a signed-out request counts as (services.gateway.limits): an IPv6 /64 is one client."""

from lecturecopilot.waiting import client_network
from services.gateway.limits import person_key


def test_an_ipv6_slash_64_is_one_client_and_ipv4_stays_an_address():
    assert client_network("2001:db8:1:2::1") == client_network("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64"
    assert client_network("2001:db8:1:3::1") != client_network("2001:db8:1:2::1")
    assert client_network("::ffff:192.0.2.7") == "192.0.2.7" == client_network("192.0.2.7")
    assert client_network("192.0.2.8") != client_network("192.0.2.7")
    assert client_network(None) == "unknown" and client_network("not an address") == "not an address"


def test_the_person_key_of_two_addresses_of_one_prefix_is_the_same():
    k = b"k" * 32
    assert person_key(k, None, "2001:db8::1") == person_key(k, None, "2001:db8::2")
    assert person_key(k, None, "10.0.0.1") != person_key(k, None, "10.0.0.2")
    assert person_key(k, "A@x.edu", "10.0.0.1") == person_key(k, "a@x.edu", "10.0.0.2")
