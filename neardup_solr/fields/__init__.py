"""fields"""
